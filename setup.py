"""Build the Cython extension; all metadata lives in pyproject.toml.

``pip install .`` builds the extension into a build directory and installs it, but
the checkout's own ``sklearn_dppca`` folder has no compiled kernel. Python puts the
current directory first on ``sys.path``, so ``python -m sklearn_dppca`` started in
the checkout would import that folder instead of the installed package and fail on
``sklearn_dppca._kendall_kernel``. The ``build_ext`` below therefore also copies
each freshly built extension next to its sources when the build runs in the source
tree (the copy is ignored by git, see .gitignore). It is the same file the wheel
installs, built from the same sources.
"""
import os
import sys
import tempfile

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


# The C kernel (sklearn_dppca/_kernel/) is compiled on its own, with its own flags:
# warnings on (it must stay clean under them; Cython's generated C is not, so the
# flags are not the extension's), -O3 as before. SKLEARN_DPPCA_KERNEL_CFLAGS adds
# flags of its own (CI's sanitizer stage: -Werror, -fsanitize=...).
KERNEL_DIR = os.path.join("sklearn_dppca", "_kernel")
KERNEL_SOURCES = [os.path.join(KERNEL_DIR, "dppca_kernel.c")]
KERNEL_HEADERS = [os.path.join(KERNEL_DIR, name)
                  for name in ("dppca_kernel.h", "dppca_rows.h")]
KERNEL_FLAGS = {
    # GCC, Clang and compilers like them (MinGW included)
    "unix": ["-O3", "-Wall", "-Wextra"],
    "mingw32": ["-O3", "-Wall", "-Wextra"],
    "cygwin": ["-O3", "-Wall", "-Wextra"],
    "msvc": ["/O2", "/W3"],
}


class build_ext_into_source_tree(build_ext):
    """``build_ext`` that compiles the C kernel with its own flags and also leaves a
    copy of each extension in the source tree."""

    def build_extension(self, ext):
        kernel_sources = getattr(ext, "kernel_sources", None)
        if kernel_sources:
            flags = list(KERNEL_FLAGS.get(self.compiler.compiler_type, []))
            flags += os.environ.get("SKLEARN_DPPCA_KERNEL_CFLAGS", "").split()
            objects = self.compiler.compile(
                kernel_sources, output_dir=self.build_temp,
                include_dirs=[KERNEL_DIR], extra_postargs=flags,
                depends=KERNEL_HEADERS, debug=self.debug, macros=[])
            # objects from an earlier build of this extension are replaced
            ext.extra_objects = [obj for obj in ext.extra_objects
                                 if obj not in objects] + objects
        super().build_extension(ext)

    def run(self):
        super().run()
        if self.inplace:          # build_ext --inplace / editable installs: done
            return
        for ext in self.extensions:
            self._copy_into_sources(ext)

    def _copy_into_sources(self, ext):
        built = self.get_ext_fullpath(ext.name)
        parts = ext.name.split(".")
        package_dir = os.path.join(HERE, *parts[:-1])
        # only a real source tree: the folder holds the extension's own sources
        sources = [os.path.join(HERE, source) for source in ext.sources]
        if not (os.path.isfile(built) and os.path.isdir(package_dir)
                and all(os.path.dirname(source) == package_dir for source in sources)
                and any(os.path.isfile(source) for source in sources)):
            return
        target = os.path.join(package_dir, os.path.basename(built))
        if os.path.abspath(built) == os.path.abspath(target):
            return
        partial = None
        try:
            # write a temporary file, then rename it: a process that has the old copy
            # loaded keeps its (now unlinked) file instead of seeing it rewritten
            handle, partial = tempfile.mkstemp(dir=package_dir, suffix=".partial")
            with os.fdopen(handle, "wb") as copy, open(built, "rb") as original:
                copy.write(original.read())
            os.chmod(partial, 0o755)
            os.replace(partial, target)
        except OSError as error:   # a read-only checkout: the installed copy suffices
            print(f"note: could not copy {os.path.basename(built)} into the source "
                  f"tree ({error}); run python from another directory.", file=sys.stderr)
            if partial is not None and os.path.exists(partial):
                os.unlink(partial)
        else:
            print(f"copied {os.path.basename(built)} into {package_dir}", file=sys.stderr)


kernel = Extension(
    "sklearn_dppca._kendall_kernel",
    ["sklearn_dppca/_kendall_kernel.pyx"],
    include_dirs=[numpy.get_include(), KERNEL_DIR],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
    # SKLEARN_DPPCA_EXT_CFLAGS: flags after these (CI's sanitizer stage lowers the
    # optimisation of Cython's generated C, which takes 27 s at -O3 under ASan)
    extra_compile_args=["-O3"] + os.environ.get("SKLEARN_DPPCA_EXT_CFLAGS", "").split(),
    # a change to the C kernel rebuilds the extension (and puts it in the sdist)
    depends=KERNEL_SOURCES + KERNEL_HEADERS,
)
# the exact integer noise (Canonne, Kamath and Steinke 2020) on the generator's bits
integer_noise = Extension(
    "sklearn_dppca.privacy._integer_noise",
    ["sklearn_dppca/privacy/_integer_noise.pyx"],
    include_dirs=[numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
    extra_compile_args=["-O3"] + os.environ.get("SKLEARN_DPPCA_EXT_CFLAGS", "").split(),
)
extensions = cythonize(
    [kernel, integer_noise],
    compiler_directives={
        "language_level": "3",
        "boundscheck": False,
        "wraparound": False,
        "cdivision": True,
        "initializedcheck": False,
    },
)
for extension in extensions:
    if extension.name == kernel.name:     # (the integer noise has no C kernel)
        extension.kernel_sources = KERNEL_SOURCES

setup(
    cmdclass={"build_ext": build_ext_into_source_tree},
    ext_modules=extensions,
)
