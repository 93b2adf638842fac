"""The data layer every fit reads its rows through: input reading (``_input``:
arrays, DataFrames, Dask collections, the public row blocks), the rows and their
passes (``_rows``) and each private statistic's per-block part and sensitivity
(``_statistics``). Nothing above it sees a block or a data layout."""
