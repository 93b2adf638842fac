/* The row helpers of a task (max |x|, the local copy of the rows, their scaling
   and norms), written once and compiled once per ISA level: dppca_kernel.c
   includes this file with DPPCA_ROWS(name) naming the build and DPPCA_ROWS_ATTR
   its target attribute, and the route in use picks one build through function
   pointers. (Before, GCC's target_clones picked one through an ifunc; an ifunc
   needs glibc, a selection by hand runs on musl and elsewhere too, and it follows
   a forced route.) No include guard: included once per build. */
#ifndef DPPCA_ROWS
#  error "dppca_rows.h is a template: include it from dppca_kernel.c"
#endif

/* max |x| over size doubles (0 for none), one pass, without branches. */
DPPCA_ROWS_ATTR static double DPPCA_ROWS(max_abs)(const double* x, dppca_index size) {
    dppca_index i;
    double largest = 0.0;
#if defined(__GNUC__)
    dppca_m4 magnitude = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL,
                          0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    dppca_v4 best[4] = {{0}, {0}, {0}, {0}};
    for (i = 0; i + 16 <= size; i += 16) {
        int part;
        for (part = 0; part < 4; part++) {
            dppca_v4 value;
            dppca_m4 above;
            DPPCA_LOAD(value, x + i + 4 * part);
            value = (dppca_v4)((dppca_m4)value & magnitude);
            above = value > best[part];
            best[part] = (dppca_v4)(((dppca_m4)value & above)
                                    | ((dppca_m4)best[part] & ~above));
        }
    }
    for (int part = 0; part < 4; part++)
        for (int lane = 0; lane < 4; lane++)
            if (best[part][lane] > largest) largest = best[part][lane];
#else
    i = 0;
#endif
    for (; i < size; i++) {
        double value = x[i] < 0 ? -x[i] : x[i];
        if (value > largest) largest = value;
    }
    return largest;
}

/* rows[k width + l] = X[order[(first + l) mod n], k], l < count: the rows,
   transposed, as they are (dppca_finish_rows scales and centres them once the
   task's scale is known); returns the largest |x| among them. The rows are
   read in a random order, eight at a time (one cache line of each output row);
   the rows DPPCA_AHEAD tiles ahead are prefetched, every cache line of each. */
DPPCA_ROWS_ATTR static double DPPCA_ROWS(local_rows)(
        const double* X, const dppca_index* order, dppca_index n, dppca_index p,
        dppca_index first, dppca_index count, dppca_index width, double* rows) {
    dppca_index l, k, q, tile, position = first % n;
    const double* source[8];
    double largest[8] = {0, 0, 0, 0, 0, 0, 0, 0}, result = 0.0;
    for (l = 0; l < count; l += 8) {
        tile = count - l < 8 ? count - l : 8;
        for (q = 0; q < tile; q++) {
            source[q] = X + order[position] * p;
            position = (position + 1 == n) ? 0 : position + 1;
        }
#if defined(__GNUC__)
        {
            dppca_index ahead = (position + 8 * (DPPCA_AHEAD - 1)) % n, line;
            for (q = 0; q < 8; q++) {
                const double* row = X + order[ahead] * p;
                for (line = 0; line < p; line += 8)
                    __builtin_prefetch(row + line, 0, 1);
                __builtin_prefetch(row + p - 1, 0, 1);
                ahead = (ahead + 1 == n) ? 0 : ahead + 1;
            }
        }
#endif
        if (tile == 8) {
            for (k = 0; k < p; k++) {
                double* out = rows + k * width + l;
                for (q = 0; q < 8; q++) {
                    double value = source[q][k];
                    double magnitude = value < 0 ? -value : value;
                    out[q] = value;
                    largest[q] = magnitude > largest[q] ? magnitude : largest[q];
                }
            }
        } else {
            for (k = 0; k < p; k++)
                for (q = 0; q < tile; q++) {
                    double value = source[q][k];
                    double magnitude = value < 0 ? -value : value;
                    rows[k * width + l + q] = value;
                    largest[q] = magnitude > largest[q] ? magnitude : largest[q];
                }
        }
    }
    for (q = 0; q < 8; q++) result = largest[q] > result ? largest[q] : result;
    return result;
}

/* rows[k width + l] = rows[k width + l] high low - centre[k] (centre already
   scaled) and norms[l] = sum_k rows[k width + l]^2, l < count. */
DPPCA_ROWS_ATTR static void DPPCA_ROWS(finish_rows)(
        double* rows, dppca_index width, dppca_index count, dppca_index p,
        double high, double low, const double* centre, double* norms) {
    dppca_index l, k;
    for (l = 0; l < count; l++) norms[l] = 0.0;
    for (k = 0; k < p; k++) {
        double* row = rows + k * width;
        double shift = centre[k];
        for (l = 0; l < count; l++) {
            double value = row[l] * high * low - shift;
            row[l] = value;
            norms[l] += value * value;
        }
    }
}
