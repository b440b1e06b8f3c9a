/* Exact (proven-optimal) search for SCAMP-5 macro programs: iterative-deepening depth-first search
 * (IDA*) forward over register states.  Driven from core/cain/exact.py, which documents the model,
 * the pruning rules and their proofs (docs/cain.md, "Proven optimality (exact method)").
 *
 * Values are linear combinations of input pixels with integer coefficients in units of
 * 2^-(d + X) (X spare bits for halvings below the goals' grid), interned in one store: a value
 * is an id, 0 means "empty register".  A state is R registers (value id, and a "fresh" bit: the
 * value was written by an instruction and not read since).  The search is resumable: ex_run()
 * advances by a node budget and returns; everything lives in the handle.
 *
 * Our own design; no other project's code.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;
typedef uint32_t u32;
typedef uint64_t u64;

#define RMAX 8
#define GMAX 16
#define NSYM 8
#define NOFF 13
#define POS_LIMIT 100          /* |x|, |y| of any Atom (a program of <= 50 steps moves <= 100) */
#define COEF_LIMIT ((i64)1 << 60)
#define SHCAP 12               /* box growth per direction, capped for the shift table */
#define BIG 1000

/* instruction families (the Python side turns them into macros) */
enum { F_MOV, F_NEG, F_ADD2, F_ADD3, F_SUB, F_DIV4, F_DIVA, F_DIV3, F_DIVQ, F_RES1, F_RES2 };

/* instruction-set switches (exact.py: _ISA_BITS) */
#define I_MOV 1
#define I_MOVX 2
#define I_MOV2X 4
#define I_NEG 8
#define I_ADD 16
#define I_ADD3 32
#define I_ADDX 64
#define I_ADD2X 128
#define I_SUB 256
#define I_SUBX 512
#define I_SUB2X 1024
#define I_DIV4 2048
#define I_DIVA 4096
#define I_DIV3 8192
#define I_DIVQ 16384
#define I_RES1 32768
#define I_RES2 65536

/* status of ex_run */
enum { ST_RUNNING = 0, ST_FOUND = 1, ST_LIMIT = 2, ST_ERROR = 3 };

static const int OFFX[NOFF] = {0, 1, 0, -1, 0, 2, 0, -2, 0, 1, -1, -1, 1};
static const int OFFY[NOFF] = {0, 0, 1, 0, -1, 0, 2, 0, -2, 1, 1, -1, -1};
#define UNIT_OFFS 0x1E    /* offsets 1..4 */
#define DOUBLE_OFFS 0x1FE0 /* offsets 5..12 */

/* ------------------------------------------------------------------ fingerprints */
/* phi(v) = sum of c * X^x * Y^y * Z^z mod 2^61 - 1: a homomorphism for every macro (a shift by d
 * multiplies by X^dx Y^dy, a halving by 1/2), so a result's fingerprint costs O(1) from its
 * operands'. Equal values have equal fingerprints; a match is always confirmed on the terms. */
#define MODP ((u64)0x1FFFFFFFFFFFFFFFULL)

static inline u64 mulm(u64 a, u64 b) {
    __uint128_t r = (__uint128_t)a * b;
    u64 s = (u64)(r & MODP) + (u64)(r >> 61);
    s = (s & MODP) + (s >> 61);
    return s >= MODP ? s - MODP : s;
}
static inline u64 addm(u64 a, u64 b) {
    u64 s = a + b;
    return s >= MODP ? s - MODP : s;
}
static inline u64 subm(u64 a, u64 b) { return a >= b ? a - b : a + MODP - b; }
static u64 powm(u64 a, u64 e) {
    u64 r = 1;
    while (e) {
        if (e & 1) r = mulm(r, a);
        a = mulm(a, a);
        e >>= 1;
    }
    return r;
}
static inline u64 invm(u64 a) { return powm(a, MODP - 2); }
static inline u64 tom(i64 c) {
    i64 r = c % (i64)MODP;
    return (u64)(r < 0 ? r + (i64)MODP : r);
}

static u64 PX[256], PY[256], PZ[256], MOFF[NOFF], MINV[NOFF], MSELF[NOFF], INV2;

static void phi_init(void) {
    static int done;
    if (done) return;
    const u64 X = 0x1234567890ABCDULL % MODP, Y = 0x0FEDCBA987654321ULL % MODP, Z = 0x13579BDF2468ACEULL % MODP;
    u64 xi = invm(X), yi = invm(Y);
    for (int i = 0; i < 256; i++) {
        int e = i - 128;
        PX[i] = e >= 0 ? powm(X, (u64)e) : powm(xi, (u64)-e);
        PY[i] = e >= 0 ? powm(Y, (u64)e) : powm(yi, (u64)-e);
        PZ[i] = powm(Z, (u64)i);
    }
    for (int o = 0; o < NOFF; o++) {
        MOFF[o] = mulm(PX[OFFX[o] + 128], PY[OFFY[o] + 128]);
        MINV[o] = invm(MOFF[o]);
        MSELF[o] = o ? invm(subm(MOFF[o], 1)) : 0;   /* 1 / (m - 1): s(v) - v = g */
    }
    INV2 = invm(2);
    done = 1;
}

static u64 phi_terms(const int *pos, const i64 *c, int n) {
    u64 r = 0;
    for (int i = 0; i < n; i++)
        r = addm(r, mulm(tom(c[i]), mulm(PX[pos[i] & 0xFF], mulm(PY[(pos[i] >> 8) & 0xFF], PZ[(pos[i] >> 16) & 0xFF]))));
    return r;
}

/* a set of fingerprints (open addressing; cleared by bumping a generation stamp) */
#define FSET_BITS 16
#define FSET_MASK ((1u << FSET_BITS) - 1)
typedef struct {
    u64 v[1 << FSET_BITS];
    u32 stamp[1 << FSET_BITS];
    u64 list[1 << (FSET_BITS - 1)];    /* the members in insertion order */
    u32 gen;
    int n;
} fset_t;

static void fset_clear(fset_t *s) {
    if (++s->gen == 0) {
        memset(s->stamp, 0, sizeof s->stamp);
        s->gen = 1;
    }
    s->n = 0;
}
static void fset_add(fset_t *s, u64 x) {
    if (s->n >= (1 << FSET_BITS) / 2) return;    /* full: callers treat a full set as "anything" */
    u32 i = (u32)(x ^ (x >> 29)) & FSET_MASK;
    while (s->stamp[i] == s->gen) {
        if (s->v[i] == x) return;
        i = (i + 1) & FSET_MASK;
    }
    s->stamp[i] = s->gen;
    s->v[i] = x;
    s->list[s->n++] = x;
}
static int fset_has(const fset_t *s, u64 x) {
    if (s->n >= (1 << FSET_BITS) / 2) return 1;
    u32 i = (u32)(x ^ (x >> 29)) & FSET_MASK;
    while (s->stamp[i] == s->gen) {
        if (s->v[i] == x) return 1;
        i = (i + 1) & FSET_MASK;
    }
    return 0;
}

/* ------------------------------------------------------------------ value store */
/* what the heuristic needs of a value, computed before the value is interned */
typedef struct {
    u32 len;
    u32 wt;             /* signed-digit weight: sum over positions of the non-adjacent form's digits */
    uint8_t tz;         /* 2-adic valuation in units (min over coefficients); 255 for zero */
    int8_t gidx;        /* index of the goal value it equals, or -1 */
    int8_t gcls;        /* index of the goals' class it belongs to (sign, translation, 2^k), or -1 */
    int8_t box[4];      /* xmin, xmax, ymin, ymax */
    uint16_t gmask;     /* relaxed: the goals it stands for (g = it / 2^j, j >= 0); one value may stand for several */
} vf_t;

typedef struct {
    u32 h;
    int id;
} slot_t;

typedef struct {
    int *tpos;          /* packed position (z << 16 | (y + 128) << 8 | (x + 128)) per term */
    i64 *tcoef;
    size_t nt, capt;
    u32 *off;
    u32 *hash;
    u64 *phi;           /* fingerprint */
    vf_t *vf;
    int *sym;           /* NSYM transformed ids per value, 0 = not computed yet */
    int nv, capv;
    slot_t *table;      /* open addressing, id 0 = free */
    u32 tmask;
} store_t;

typedef struct {
    int8_t fam, off;
    int8_t r[4];
} ins_t;

typedef struct {
    int id[RMAX];
    uint8_t fresh;
} st_t;

typedef struct {
    st_t s;
    ins_t ins;
    int16_t h;
    u32 key[RMAX];
} child_t;

typedef struct {
    st_t s;
    int g;
    size_t ch0, nch, next;
    u32 key[RMAX];
} frame_t;

typedef struct {
    u32 key[RMAX];
    uint8_t budget;     /* 0 = free slot; else 1 + the remaining budget refuted */
} tte_t;

typedef struct {
    int n;
    u32 h;
    int *pos;
    i64 *c;
    int w;
} gclass_t;

typedef struct {
    int R, nch, flags, symmask, zero_ok, maxread, has4, has_sa, selfsub, kadd, has_half, has_add;
    int relaxed, hmin;  /* relaxed problem (see generate_relaxed); H: halvings any program needs */
    int unit;           /* the input's valuation: values are integers over 2^unit */
    int gbase[GMAX], gsign[GMAX], gtzv[GMAX], gcl[GMAX];
    int ggrp[GMAX];     /* relaxed: goals one value can stand for together (same class, anchor, sign) */
    int offmask[3];     /* allowed offsets of MOV, ADD2, SUB */
    int ng;             /* distinct goal values */
    int gid[GMAX], need[GMAX], gw[GMAX];
    u32 ghash[GMAX];
    int ncls;           /* distinct classes of the goals */
    gclass_t cls[GMAX];
    int wsum;           /* sum of goal weights (with multiplicity) */
    uint8_t *shtab;
    store_t st;
    /* scratch */
    int *bpos[4];
    i64 *bcoef[4];
    size_t bcap;
    /* search */
    int bound, limit, T, status, overflow;
    fset_t *f2, *f3;
    long nodes, generated, pushed, gcs;
    int gc_values;      /* collect the value store when it holds more than this */
    int split_k, split_n;   /* explore only the input's children i with i % split_n == split_k (0, 1: all) */
    int split_depth;        /* 2: split the children of each state after one instruction instead */
    long hist[64][16];   /* nodes entered by depth and family (diagnostics) */
    frame_t *fr;
    int depth, capfr;
    child_t *ch;
    size_t nchild, capch;
    tte_t *tt;
    u32 ttmask;
    ins_t path[64];
    int plen;
    st_t root;
} P;

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) abort();
    return q;
}

static inline int pos_x(int p) { return (p & 0xFF) - 128; }
static inline int pos_y(int p) { return ((p >> 8) & 0xFF) - 128; }
static inline int pos_z(int p) { return p >> 16; }
static inline int pack(int x, int y, int z) { return (z << 16) | ((y + 128) << 8) | (x + 128); }

static u32 naf_weight(i64 n) {
    u64 v = (u64)(n < 0 ? -n : n);
    u32 w = 0;
    while (v) {
        if (v & 1) {
            w++;
            if (v & 2) v += 1; else v -= 1;
        }
        v >>= 1;
    }
    return w;
}

static inline u64 mix(u64 h, u64 x) {
    h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static u32 hash_terms(const int *pos, const i64 *c, int n) {
    u64 h = 1469598103934665603ULL ^ (u64)n;
    for (int i = 0; i < n; i++) h = mix(mix(h, (u64)(u32)pos[i]), (u64)c[i]);
    h ^= h >> 33;
    return (u32)h;
}

static void buf_reserve(P *p, size_t n) {
    if (n <= p->bcap) return;
    size_t cap = p->bcap ? p->bcap : 1024;
    while (cap < n) cap *= 2;
    for (int i = 0; i < 4; i++) {
        p->bpos[i] = xrealloc(p->bpos[i], cap * sizeof(int));
        p->bcoef[i] = xrealloc(p->bcoef[i], cap * sizeof(i64));
    }
    p->bcap = cap;
}

static inline const int *vpos(P *p, int id) { return p->st.tpos + p->st.off[id]; }
static inline const i64 *vcoef(P *p, int id) { return p->st.tcoef + p->st.off[id]; }
static inline int vlen(P *p, int id) { return (int)p->st.vf[id].len; }

static int same_terms(P *p, int id, const int *pos, const i64 *c, int n) {
    if (vlen(p, id) != n) return 0;
    if (!n) return 1;
    return memcmp(vpos(p, id), pos, (size_t)n * sizeof(int)) == 0 &&
           memcmp(vcoef(p, id), c, (size_t)n * sizeof(i64)) == 0;
}

/* the class of a value: common power of two removed, first coefficient positive, first Atom at
 * (0, 0) of its channel; its hash, and whether it equals goal class j */
static u32 class_hash(const int *pos, const i64 *c, int n, int tz) {
    int base = pos[0] & 0xFFFF;
    i64 sign = c[0] < 0 ? -1 : 1;
    u64 h = 7 ^ (u64)n;
    for (int i = 0; i < n; i++) h = mix(mix(h, (u64)(u32)(pos[i] - base)), (u64)(sign * (c[i] >> tz)));
    h ^= h >> 33;
    return (u32)h;
}

static int class_equal(const gclass_t *g, const int *pos, const i64 *c, int n, int tz) {
    if (g->n != n) return 0;
    int base = pos[0] & 0xFFFF;
    i64 sign = c[0] < 0 ? -1 : 1;
    for (int i = 0; i < n; i++)
        if (g->pos[i] != pos[i] - base || g->c[i] != sign * (c[i] >> tz)) return 0;
    return 1;
}

static void features(P *p, const int *pos, const i64 *c, int n, u32 h, vf_t *f) {
    int tz = 255;
    u32 wt = 0;
    int x0 = 127, x1 = -128, y0 = 127, y1 = -128;
    for (int i = 0; i < n; i++) {
        i64 a = c[i] < 0 ? -c[i] : c[i];
        int z = __builtin_ctzll((u64)a);
        if (z < tz) tz = z;
        wt += naf_weight(c[i]);
        int x = pos_x(pos[i]), y = pos_y(pos[i]);
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
    }
    f->len = (u32)n;
    f->wt = wt;
    f->tz = (uint8_t)tz;
    f->box[0] = (int8_t)x0;
    f->box[1] = (int8_t)x1;
    f->box[2] = (int8_t)y0;
    f->box[3] = (int8_t)y1;
    f->gidx = -1;
    f->gcls = -1;
    f->gmask = 0;
    if (!n) return;
    if (p->ncls) {
        u32 ch = class_hash(pos, c, n, tz);
        for (int j = 0; j < p->ncls; j++)
            if (p->cls[j].h == ch && class_equal(&p->cls[j], pos, c, n, tz)) f->gcls = (int8_t)j;
    }
    if (!p->relaxed) {
        for (int g = 0; g < p->ng; g++)
            if (p->ghash[g] == h && p->gid[g] && same_terms(p, p->gid[g], pos, c, n)) f->gidx = (int8_t)g;
    } else if (f->gcls >= 0) {
        /* relaxed: a value "holds" goal g when g is it halved j >= 0 times */
        int base = pos[0] & 0xFFFF, sign = c[0] < 0 ? -1 : 1;
        for (int g = 0; g < p->ng; g++)
            if (p->gcl[g] == f->gcls && p->gbase[g] == base && p->gsign[g] == sign && tz >= p->gtzv[g]) {
                f->gidx = (int8_t)g;
                f->gmask |= (uint16_t)(1u << g);
            }
    }
}

static int store_find(P *p, const int *pos, const i64 *c, int n, u32 h) {
    store_t *s = &p->st;
    for (u32 i = h & s->tmask;; i = (i + 1) & s->tmask) {
        slot_t e = s->table[i];
        if (!e.id) return 0;
        if (e.h == h && same_terms(p, e.id, pos, c, n)) return e.id;
    }
}

static void table_put(store_t *s, u32 h, int id) {
    u32 i = h & s->tmask;
    while (s->table[i].id) i = (i + 1) & s->tmask;
    s->table[i].h = h;
    s->table[i].id = id;
}

static void table_grow(P *p) {
    store_t *s = &p->st;
    u32 size = (s->tmask + 1) * 2;
    free(s->table);
    s->table = calloc(size, sizeof(slot_t));
    if (!s->table) abort();
    s->tmask = size - 1;
    for (int id = 1; id < s->nv; id++) table_put(s, s->hash[id], id);
}

/* intern a value whose features are known (f may be NULL: computed here) */
static int store_intern(P *p, const int *pos, const i64 *c, int n, u32 h, const vf_t *f) {
    int found = store_find(p, pos, c, n, h);
    if (found) return found;
    store_t *s = &p->st;
    if (s->nv + 1 >= s->capv) {
        int cap = s->capv ? s->capv * 2 : 4096;
        s->off = xrealloc(s->off, cap * sizeof(u32));
        s->hash = xrealloc(s->hash, cap * sizeof(u32));
        s->phi = xrealloc(s->phi, cap * sizeof(u64));
        s->vf = xrealloc(s->vf, cap * sizeof(vf_t));
        s->sym = xrealloc(s->sym, (size_t)cap * NSYM * sizeof(int));
        s->capv = cap;
    }
    if (s->nt + (size_t)n > s->capt) {
        size_t cap = s->capt ? s->capt : 1 << 16;
        while (cap < s->nt + (size_t)n) cap *= 2;
        s->tpos = xrealloc(s->tpos, cap * sizeof(int));
        s->tcoef = xrealloc(s->tcoef, cap * sizeof(i64));
        s->capt = cap;
    }
    int id = s->nv++;
    s->off[id] = (u32)s->nt;
    if (n) {
        memcpy(s->tpos + s->nt, pos, (size_t)n * sizeof(int));
        memcpy(s->tcoef + s->nt, c, (size_t)n * sizeof(i64));
    }
    s->nt += (size_t)n;
    s->hash[id] = h;
    s->phi[id] = phi_terms(pos, c, n);
    if (f) s->vf[id] = *f;
    else features(p, s->tpos + s->off[id], s->tcoef + s->off[id], n, h, &s->vf[id]);
    for (int k = 0; k < NSYM; k++) s->sym[(size_t)id * NSYM + k] = 0;
    if ((u32)(s->nv * 2) > s->tmask) table_grow(p);
    else table_put(s, h, id);
    return id;
}

/* ------------------------------------------------------------------ dihedral symmetries */
static void sym_xy(int k, int x, int y, int *ox, int *oy) {
    switch (k) {
    case 0: *ox = x; *oy = y; break;
    case 1: *ox = -y; *oy = x; break;
    case 2: *ox = -x; *oy = -y; break;
    case 3: *ox = y; *oy = -x; break;
    case 4: *ox = -x; *oy = y; break;
    case 5: *ox = x; *oy = -y; break;
    case 6: *ox = y; *oy = x; break;
    default: *ox = -y; *oy = -x; break;
    }
}

typedef struct { int pos; i64 c; } term_t;

static int cmp_term(const void *a, const void *b) {
    int pa = ((const term_t *)a)->pos, pb = ((const term_t *)b)->pos;
    return (pa > pb) - (pa < pb);
}

static term_t *g_terms;
static size_t g_terms_cap;

static int sym_id(P *p, int id, int k) {
    if (k == 0 || id <= 1) return id;
    int cached = p->st.sym[(size_t)id * NSYM + k];
    if (cached) return cached;
    int n = vlen(p, id);
    if ((size_t)n > g_terms_cap) {
        g_terms_cap = (size_t)n * 2;
        g_terms = xrealloc(g_terms, g_terms_cap * sizeof(term_t));
    }
    const int *vp = vpos(p, id);
    const i64 *vc = vcoef(p, id);
    for (int i = 0; i < n; i++) {
        int x, y;
        sym_xy(k, pos_x(vp[i]), pos_y(vp[i]), &x, &y);
        g_terms[i].pos = pack(x, y, pos_z(vp[i]));
        g_terms[i].c = vc[i];
    }
    qsort(g_terms, (size_t)n, sizeof(term_t), cmp_term);
    static int *tp;
    static i64 *tc;
    static size_t tcap;
    if ((size_t)n > tcap) {
        tcap = (size_t)n * 2;
        tp = xrealloc(tp, tcap * sizeof(int));
        tc = xrealloc(tc, tcap * sizeof(i64));
    }
    for (int i = 0; i < n; i++) {
        tp[i] = g_terms[i].pos;
        tc[i] = g_terms[i].c;
    }
    /* the features of a symmetric image: same weight, valuation and goal class membership up to
     * the symmetry, which maps goals to goals; computed afresh to keep it simple */
    int r = store_intern(p, tp, tc, n, hash_terms(tp, tc, n), NULL);
    p->st.sym[(size_t)id * NSYM + k] = r;
    return r;
}

/* ------------------------------------------------------------------ value arithmetic into buffers */
/* out = shift(a, off) ; returns n or -1 when an Atom leaves the window */
static int v_shift(P *p, const int *ap, const i64 *ac, int n, int off, int *op, i64 *oc) {
    int dx = OFFX[off], dy = OFFY[off];
    int d = dx + (dy << 8);
    for (int i = 0; i < n; i++) {
        int x = pos_x(ap[i]) + dx, y = pos_y(ap[i]) + dy;
        if (x > POS_LIMIT || x < -POS_LIMIT || y > POS_LIMIT || y < -POS_LIMIT) return -1;
        op[i] = ap[i] + d;
        oc[i] = ac[i];
    }
    (void)p;
    return n;
}

/* out = a + sign * b (merge of sorted term lists) */
static int v_add(P *p, const int *ap, const i64 *ac, int na, const int *bp, const i64 *bc, int nb, int sign,
                 int *op, i64 *oc) {
    int i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        if (j >= nb || (i < na && ap[i] < bp[j])) {
            op[n] = ap[i];
            oc[n++] = ac[i++];
        } else if (i >= na || bp[j] < ap[i]) {
            op[n] = bp[j];
            oc[n++] = sign * bc[j++];
        } else {
            i64 c = ac[i] + sign * bc[j];
            if (c) {
                if (c >= COEF_LIMIT || c <= -COEF_LIMIT) p->overflow = 1;
                op[n] = ap[i];
                oc[n++] = c;
            }
            i++;
            j++;
        }
    }
    return n;
}

/* ------------------------------------------------------------------ heuristic */
static int log_steps(i64 have, i64 want, int k) {
    /* fewest t >= 0 with have * k^t >= want */
    int t = 0;
    if (have <= 0) return BIG;
    while (have < want) {
        have *= k;
        t++;
    }
    return t;
}

static int shift_need(P *p, int e, int w, int n, int s) {
    if (e > SHCAP) e = SHCAP;
    if (w > SHCAP) w = SHCAP;
    if (n > SHCAP) n = SHCAP;
    if (s > SHCAP) s = SHCAP;
    return p->shtab[((e * (SHCAP + 1) + w) * (SHCAP + 1) + n) * (SHCAP + 1) + s];
}

static void build_shift_table(P *p) {
    int C = SHCAP + 1;
    int mask = (p->offmask[0] | p->offmask[1] | p->offmask[2]) & ~1;
    p->shtab = xrealloc(NULL, (size_t)C * C * C * C);
    /* states in order of e + w + n + s */
    for (int sum = 0; sum <= 4 * SHCAP; sum++)
        for (int e = 0; e < C; e++)
            for (int w = 0; w < C; w++)
                for (int n = 0; n < C; n++) {
                    int s = sum - e - w - n;
                    if (s < 0 || s >= C) continue;
                    int idx = ((e * C + w) * C + n) * C + s;
                    if (sum == 0) {
                        p->shtab[idx] = 0;
                        continue;
                    }
                    int best = 255;
                    for (int o = 1; o < NOFF; o++) {
                        if (!(mask >> o & 1)) continue;
                        int dx = OFFX[o], dy = OFFY[o];
                        int e2 = e - (dx > 0 ? dx : 0), w2 = w - (dx < 0 ? -dx : 0);
                        int n2 = n - (dy > 0 ? dy : 0), s2 = s - (dy < 0 ? -dy : 0);
                        if (e2 < 0) e2 = 0;
                        if (w2 < 0) w2 = 0;
                        if (n2 < 0) n2 = 0;
                        if (s2 < 0) s2 = 0;
                        if (e2 + w2 + n2 + s2 == sum) continue;
                        int v = p->shtab[((e2 * C + w2) * C + n2) * C + s2];
                        if (v + 1 < best) best = v + 1;
                    }
                    p->shtab[idx] = (uint8_t)(best > 254 ? 254 : best);
                }
}

/* non-halving instructions needed: a4 three-operand adds and b two-operand ones reach weight
 * M 3^a4 2^b; there are at least `acls` adds; and `sh` shifting instructions, which only the
 * shifting adds among the b can share */
static int mixed_bound(P *p, i64 M, i64 wmax, int acls, int sh) {
    if (!p->has_add && (wmax > M || acls)) return BIG;
    int best = BIG;
    i64 reach = M;
    for (int a4 = 0; a4 <= (p->has4 ? 40 : 0) && a4 < best; a4++) {
        int b = 0;
        i64 r = reach;
        while (r < wmax) {
            r *= 2;
            b++;
        }
        if (b < acls - a4) b = acls - a4;
        int moves = sh - (p->has_sa ? b : 0);
        int cost = a4 + b + (moves > 0 ? moves : 0);
        if (cost < best) best = cost;
        if (reach < wmax) reach *= 3;
    }
    return best;
}

/* instructions needed for register weights (sum W, max M) to reach a value of weight wmax and a
 * total of wsum held at once: a new value weighs at most W (operands in distinct registers) or 2M
 * (x shifted minus x) */
static int potential_bound(P *p, i64 W, i64 M, i64 wmax, i64 wsum) {
    int t = 0;
    if (M <= 0) return BIG;
    while (M < wmax || W < wsum) {
        i64 n = W;
        if (p->selfsub && 2 * M > n) n = 2 * M;
        if (n > M) M = n;
        W += n;
        if (W > (i64)p->R * M) W = (i64)p->R * M;
        t++;
        if (t > 60) return BIG;
    }
    return t;
}

/* h(state): a lower bound on the instructions any rule-following completion needs; 0 iff final.
 * f[i]: features of register i's value (NULL when empty). */
static int heur(P *p, const vf_t *const *f, int freshmask) {
    int held[GMAX] = {0}, fheld[GMAX] = {0};
    int F = 0, mintz = 255, any = 0;
    i64 W = 0, M = 0;
    int bx0 = 127, bx1 = -128, by0 = 127, by1 = -128;
    u32 clsheld = 0;
    for (int i = 0; i < p->R; i++) {
        const vf_t *v = f[i];
        if (!v) continue;
        int fr = freshmask >> i & 1;
        int g = v->gidx;
        if (p->relaxed) {
            for (int k = 0; k < p->ng; k++) held[k] |= v->gmask >> k & 1;
            if (fr && !v->gmask) F++;
        } else if (g >= 0) {
            held[g]++;
            if (fr) fheld[g]++;
        } else if (fr) F++;
        if (!v->len) continue;
        any = 1;
        if (v->tz < mintz) mintz = v->tz;
        W += v->wt;
        if ((i64)v->wt > M) M = v->wt;
        if (v->box[0] < bx0) bx0 = v->box[0];
        if (v->box[1] > bx1) bx1 = v->box[1];
        if (v->box[2] < by0) by0 = v->box[2];
        if (v->box[3] > by1) by1 = v->box[3];
        if (v->gcls >= 0) clsheld |= 1u << v->gcls;
    }
    int O = 0, gtz = 255;
    int gx0 = 127, gx1 = -128, gy0 = 127, gy1 = -128;
    i64 wmax = 0;
    u32 clsneed = 0;
    for (int g = 0; g < p->ng; g++) {
        if (fheld[g] > p->need[g]) F += fheld[g] - p->need[g];
        if (held[g] >= p->need[g]) continue;
        O += p->need[g] - held[g];
        const vf_t *v = &p->st.vf[p->gid[g]];
        if (v->tz < gtz) gtz = v->tz;
        if (v->box[0] < gx0) gx0 = v->box[0];
        if (v->box[1] > gx1) gx1 = v->box[1];
        if (v->box[2] < gy0) gy0 = v->box[2];
        if (v->box[3] > gy1) gy1 = v->box[3];
        if ((i64)v->wt > wmax) wmax = v->wt;
        if (v->gcls >= 0 && !(clsheld >> v->gcls & 1)) clsneed |= 1u << v->gcls;
    }
    if (p->relaxed && O) {
        /* one value stands for every goal of a group: count the groups with a goal not held */
        u32 groups = 0;
        for (int g = 0; g < p->ng; g++)
            if (held[g] < p->need[g]) groups |= 1u << p->ggrp[g];
        O = __builtin_popcount(groups);
    }
    int debt = (F + p->maxread - 1) / p->maxread;
    if (O == 0) return F ? (debt > 1 ? debt : 1) : 0;
    if (!any) return BIG;
    /* halvings: only they lower the smallest valuation held */
    int H = mintz > gtz && !p->relaxed ? mintz - gtz : 0;
    if (H && !p->has_half) return BIG;
    /* adds by class: the i-th heaviest class not held needs its own add, after log_k(w / M) adds */
    int wts[GMAX], nw = 0;
    for (int j = 0; j < p->ncls; j++)
        if (clsneed >> j & 1) wts[nw++] = p->cls[j].w;
    for (int i = 1; i < nw; i++)      /* sort descending */
        for (int j = i; j > 0 && wts[j] > wts[j - 1]; j--) {
            int t = wts[j];
            wts[j] = wts[j - 1];
            wts[j - 1] = t;
        }
    int A = 0;
    for (int i = 0; i < nw; i++) {
        int t = log_steps(M, wts[i], p->kadd);
        if (t < 1) t = 1;
        if (t + i > A) A = t + i;
    }
    /* shifts: the box of everything held must grow to the box of the goals not held */
    int Sh = shift_need(p, gx1 > bx1 ? gx1 - bx1 : 0, bx0 > gx0 ? bx0 - gx0 : 0,
                        gy1 > by1 ? gy1 - by1 : 0, by0 > gy0 ? by0 - gy0 : 0);
    if (Sh >= 254) return BIG;
    int N = mixed_bound(p, M, wmax, A, Sh);
    /* the register-weight potential counts every instruction that writes a value: with div(y0, y1,
     * y2, x) or divq (they keep x and write a copy) halvings count too, so it bounds the total */
    int K = p->relaxed ? 0 : potential_bound(p, W, M, wmax, p->wsum);
    int copying_halvings = !!(p->flags & (I_DIV4 | I_DIVQ));
    if (!copying_halvings && K > N) N = K;
    int h = H + N;
    if (copying_halvings && K > h) h = K;
    /* relaxed: a value finer than the goals needs that many halvings more than H in the program */
    if (p->relaxed && p->unit - mintz > p->hmin) h += p->unit - mintz - p->hmin;
    if (O > h) h = O;
    if (debt > h) h = debt;
    return h;
}

static int heur_state(P *p, const st_t *s) {
    const vf_t *f[RMAX];
    for (int i = 0; i < p->R; i++) f[i] = s->id[i] ? &p->st.vf[s->id[i]] : NULL;
    return heur(p, f, s->fresh);
}

/* ------------------------------------------------------------------ canonical keys and the table */
static void sort_u32(u32 *a, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && a[j] < a[j - 1]; j--) {
            u32 t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
}

static void canon_key(P *p, const st_t *s, u32 *out) {
    u32 cur[RMAX];
    int first = 1;
    for (int k = 0; k < NSYM; k++) {
        if (!(p->symmask >> k & 1)) continue;
        for (int i = 0; i < p->R; i++) {
            int id = s->id[i];
            cur[i] = id ? ((u32)sym_id(p, id, k) << 1) | (u32)(s->fresh >> i & 1) : 0;
        }
        sort_u32(cur, p->R);
        if (first || memcmp(cur, out, sizeof(u32) * p->R) < 0) {
            /* memcmp on u32 is not numeric order on little-endian machines, but any fixed total
             * order gives a canonical form */
            memcpy(out, cur, sizeof(u32) * p->R);
            first = 0;
        }
    }
}

static u32 key_hash(P *p, const u32 *k) {
    u64 h = 14695981039346656037ULL;
    for (int i = 0; i < p->R; i++) {
        h ^= k[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 31;
    return (u32)h;
}

/* The share a child belongs to when the search is split (split_n > 1), from positions in the search
 * order that every share sees alike: the child's index among its parent's children, and with
 * split_depth 2 the parent's index among the input's children (value ids differ between shares, so
 * keys cannot be used). Depth 1: each first instruction's subtree is searched whole by the one
 * share that owns it; a state met again deeper is dominated by its shorter path. Depth 2: every
 * share searches every state after one instruction, in the same order, so each such state X first
 * met (as child i) has each of its children searched by the share that owns (i, j); a share that
 * skips a later copy of X through the table stored it after its own children of X's first copy, and
 * the shares together searched all of them; a deeper copy of X has less budget, so it is dominated. */
static int split_share(const P *p, const frame_t *f) {
    u64 j = (u64)(f->next - 1);
    u64 i = p->split_depth == 2 ? (u64)(p->fr[0].next - 1) : 0;
    return (int)((i * 2654435761ULL + j) % (u64)p->split_n);
}

#define PROBES 8

static int tt_probe(P *p, const u32 *k) {
    u32 h = key_hash(p, k);
    for (int j = 0; j < PROBES; j++) {
        tte_t *e = &p->tt[(h + j) & p->ttmask];
        if (!e->budget) return -1;
        if (!memcmp(e->key, k, sizeof(u32) * p->R)) return e->budget - 1;
    }
    return -1;
}

static void tt_store(P *p, const u32 *k, int budget) {
    u32 h = key_hash(p, k);
    tte_t *victim = NULL;
    for (int j = 0; j < PROBES; j++) {
        tte_t *e = &p->tt[(h + j) & p->ttmask];
        if (!e->budget) {
            victim = e;
            break;
        }
        if (!memcmp(e->key, k, sizeof(u32) * p->R)) {
            if (e->budget < budget + 1) e->budget = (uint8_t)(budget + 1);
            return;
        }
        if (!victim || e->budget < victim->budget) victim = e;
    }
    memcpy(victim->key, k, sizeof(u32) * p->R);
    victim->budget = (uint8_t)(budget + 1);
}

/* ------------------------------------------------------------------ successors */
#define PEND (-7)    /* placeholder id of the result being emitted, in a child state */

typedef struct {
    P *p;
    const st_t *s;
    int g, T, goal_only, mode, emax;
    int final;          /* one instruction left: a child must be a final state */
    int empties[RMAX], ne;
    /* the pending result: interned only when some child holding it passes the heuristic */
    const int *cpos;
    const i64 *cc;
    int cn, cid;
    u32 ch;
    vf_t cf;
    u64 gphi[GMAX];     /* the goals' fingerprints, read by every candidate one instruction from the end */
} gen_t;

static int popcount8(int x) { return __builtin_popcount((unsigned)x & 0xFF); }

static void push_child(gen_t *G, st_t *ns, int fam, int off, const int *regs) {
    P *p = G->p;
    const vf_t *f[RMAX];
    int pend = 0;
    for (int i = 0; i < p->R; i++) {
        int id = ns->id[i];
        if (id == PEND) {
            if (G->cid) ns->id[i] = id = G->cid;
            else {
                f[i] = &G->cf;
                pend = 1;
                continue;
            }
        }
        f[i] = id ? &p->st.vf[id] : NULL;
    }
    int h = heur(p, f, ns->fresh);
    if (G->final && h != 0) return;
    if (G->g + 1 + h > G->T) return;
    if (pend) {
        G->cid = store_intern(p, G->cpos, G->cc, G->cn, G->ch, &G->cf);
        for (int i = 0; i < p->R; i++)
            if (ns->id[i] == PEND) ns->id[i] = G->cid;
    }
    if (p->nchild + 1 > p->capch) {
        p->capch = p->capch ? p->capch * 2 : 1 << 14;
        p->ch = xrealloc(p->ch, p->capch * sizeof(child_t));
    }
    child_t *c = &p->ch[p->nchild++];
    p->pushed++;
    c->s = *ns;
    c->h = (int16_t)h;
    c->ins.fam = (int8_t)fam;
    c->ins.off = (int8_t)off;
    for (int i = 0; i < 4; i++) c->ins.r[i] = (int8_t)regs[i];
    memset(c->key, 0, sizeof c->key);
    canon_key(p, ns, c->key);
}

/* operand-register assignment for a single-destination instruction writing `y`: each operand
 * value read from a register holding it; distinct registers where the macro needs them; a fresh
 * `y` only when it is read (in place). Among valid assignments, the one leaving fewest fresh bits. */
typedef struct {
    int fam, nops, y;
    int ops[3];
    int best_mask, best[3], have;
    int cur[3];
} asg_t;

static void asg_rec(gen_t *G, asg_t *a, int i) {
    const st_t *s = G->s;
    P *p = G->p;
    if (i == a->nops) {
        int f = a->fam;
        if (p->relaxed) goto ok;
        if (f == F_ADD2 && a->cur[0] == a->cur[1]) return;
        if (f == F_ADD3 && (a->cur[0] == a->cur[1] || a->cur[0] == a->cur[2] || a->cur[1] == a->cur[2])) return;
        if (f == F_SUB && a->y == a->cur[1]) return;
        if ((f == F_NEG || f == F_DIVQ) && a->y == a->cur[0]) return;
    ok:;
        int readmask = 0;
        for (int k = 0; k < a->nops; k++) readmask |= 1 << a->cur[k];
        if ((s->fresh >> a->y & 1) && !(readmask >> a->y & 1)) return;
        int m = (s->fresh & ~readmask) | (1 << a->y);
        if (!a->have || popcount8(m) < popcount8(a->best_mask)) {
            a->have = 1;
            a->best_mask = m;
            for (int k = 0; k < 3; k++) a->best[k] = a->cur[k];
        }
        return;
    }
    for (int r = 0; r < p->R; r++)
        if (s->id[r] == a->ops[i]) {
            a->cur[i] = r;
            asg_rec(G, a, i + 1);
        }
}

static void emit_single(gen_t *G, int fam, const int *ops, int nops, int off) {
    P *p = G->p;
    const st_t *s = G->s;
    int cand[RMAX], nc = 0;
    if (G->ne) cand[nc++] = G->empties[0];
    else
        for (int y = 0; y < p->R; y++) {
            int isop = 0;
            for (int k = 0; k < nops; k++) isop |= s->id[y] == ops[k];
            if (!(s->fresh >> y & 1) || isop) cand[nc++] = y;
        }
    for (int ci = 0; ci < nc; ci++) {
        asg_t a;
        memset(&a, 0, sizeof a);
        a.fam = fam;
        a.nops = nops;
        a.y = cand[ci];
        for (int k = 0; k < nops; k++) a.ops[k] = ops[k];
        asg_rec(G, &a, 0);
        if (!a.have) continue;
        st_t ns = *s;
        ns.id[a.y] = PEND;
        ns.fresh = (uint8_t)a.best_mask;
        int regs[4] = {a.y, a.best[0], a.best[1], a.best[2]};
        if (nops < 3) regs[3] = -1;
        if (nops < 2) regs[2] = -1;
        if (nops < 1) regs[1] = -1;
        push_child(G, &ns, fam, off, regs);
    }
}

static void halving_apply(gen_t *G, int fam, int src, const int *D) {
    st_t ns = *G->s;
    int regs[4] = {-1, -1, -1, -1};
    if (fam == F_DIV4) {          /* div(D0, D1, D2, src): D0 := src / 2 */
        ns.id[D[0]] = PEND;
        ns.id[D[1]] = 0;
        ns.id[D[2]] = 0;
        ns.fresh = (uint8_t)((ns.fresh & ~(1 << src) & ~(1 << D[1]) & ~(1 << D[2])) | (1 << D[0]));
        regs[0] = D[0]; regs[1] = D[1]; regs[2] = D[2]; regs[3] = src;
    } else if (fam == F_DIVA) {   /* diva(src, D0, D1) */
        ns.id[src] = PEND;
        ns.id[D[0]] = 0;
        ns.id[D[1]] = 0;
        ns.fresh = (uint8_t)((ns.fresh & ~(1 << D[0]) & ~(1 << D[1])) | (1 << src));
        regs[0] = src; regs[1] = D[0]; regs[2] = D[1];
    } else {                      /* div(D0, D1, src): D0 := src / 2, src clobbered */
        ns.id[D[0]] = PEND;
        ns.id[D[1]] = 0;
        ns.id[src] = 0;
        ns.fresh = (uint8_t)((ns.fresh & ~(1 << D[1]) & ~(1 << src)) | (1 << D[0]));
        regs[0] = D[0]; regs[1] = D[1]; regs[2] = src;
    }
    push_child(G, &ns, fam, 0, regs);
}

/* registers a halving destroys (writes or clobbers without reading): `k` of them, none equal to
 * `keep`; empty ones first, then ones holding a value already read */
static void emit_destroy_sets(gen_t *G, int k, int keep, int fam, int src) {
    P *p = G->p;
    const st_t *s = G->s;
    int D[3], nd = 0;
    for (int i = 0; i < G->ne && nd < k; i++)
        if (G->empties[i] != keep) D[nd++] = G->empties[i];
    if (nd == k) {
        halving_apply(G, fam, src, D);
        return;
    }
    int cand[RMAX], nc = 0;
    for (int r = 0; r < p->R; r++)
        if (r != keep && s->id[r] && !(s->fresh >> r & 1)) cand[nc++] = r;
    int need = k - nd;
    if (need == 1) {
        for (int a = 0; a < nc; a++) {
            D[nd] = cand[a];
            halving_apply(G, fam, src, D);
        }
    } else if (need == 2) {
        for (int a = 0; a < nc; a++)
            for (int b = a + 1; b < nc; b++) {
                D[nd] = cand[a];
                D[nd + 1] = cand[b];
                halving_apply(G, fam, src, D);
            }
    } else {
        for (int a = 0; a < nc; a++)
            for (int b = a + 1; b < nc; b++)
                for (int c = b + 1; c < nc; c++) {
                    D[0] = cand[a];
                    D[1] = cand[b];
                    D[2] = cand[c];
                    halving_apply(G, fam, src, D);
                }
    }
}

static void emit_halving(gen_t *G, int v) {
    P *p = G->p;
    const st_t *s = G->s;
    for (int src = 0; src < p->R; src++) {
        if (s->id[src] != v) continue;
        if (p->flags & I_DIV4) emit_destroy_sets(G, 3, src, F_DIV4, src);
        /* with three empty registers div(y0, y1, y2, x) keeps x and loses nothing: it dominates the
         * in-place forms */
        if ((p->flags & I_DIV4) && G->ne >= 3) continue;
        if (p->flags & I_DIVA) emit_destroy_sets(G, 2, src, F_DIVA, src);
        else if (p->flags & I_DIV3) emit_destroy_sets(G, 2, src, F_DIV3, src);
    }
    if (p->flags & I_DIVQ) {
        int ops[1] = {v};
        emit_single(G, F_DIVQ, ops, 1, 0);
    }
}

/* make (pos, c, n) the pending result; 0 when it cannot matter (left the window, zero where
 * zeros are useless, or not a goal where only a goal can end the program) */
static int cand(gen_t *G, const int *pos, const i64 *c, int n) {
    P *p = G->p;
    if (n < 0) return 0;
    p->generated++;
    if (n == 0) {
        if (!p->zero_ok) return 0;
        G->cid = 1;
        G->cf = p->st.vf[1];
        return 1;
    }
    u32 h = hash_terms(pos, c, n);
    if (G->goal_only) {
        for (int g = 0; g < p->ng; g++)
            if (p->ghash[g] == h && same_terms(p, p->gid[g], pos, c, n)) {
                G->cid = p->gid[g];
                G->cf = p->st.vf[G->cid];
                return 1;
            }
        return 0;
    }
    G->cpos = pos;
    G->cc = c;
    G->cn = n;
    G->ch = h;
    G->cid = 0;
    features(p, pos, c, n, h, &G->cf);
    return 1;
}

/* which results can matter: mode 0 all; mode 1 (one instruction left) only a goal; mode 2 (two
 * left) a goal, or a value some last instruction turns into a goal (it must read it: a result
 * nobody reads is dead), given as the set of fingerprints such a value can have */
static inline int phi_pass(gen_t *G, u64 f) {
    if (G->mode == 0) return 1;
    P *p = G->p;
    if (G->mode == 1) {
        for (int g = 0; g < p->ng; g++)
            if (G->gphi[g] == f) return 1;
        return 0;
    }
    return fset_has(p->f2, f);
}

/* The fingerprints a value made now may have when at most two instructions follow it that read it:
 * a goal itself, or an operand X of an instruction making a goal g from X and the values `vals`.
 * miss[g]: goal copies not held. When some are missing, only a missing goal is made by a reading
 * instruction (see generate). With `goals_too` the other operands may also be goals that are
 * missing now (made in between): another goal, or g itself when two or more copies of g are missing. */
static void build_f2(P *p, const int *vals, int nv, const int *miss, int goals_too) {
    fset_t *S = p->f2;
    fset_clear(S);
    const u64 *ph = p->st.phi;
    int any_missing = 0;
    for (int g = 0; g < p->ng; g++) any_missing |= miss[g] > 0;
    int ops[RMAX + GMAX];
    for (int g = 0; g < p->ng; g++) {
        u64 fg = ph[p->gid[g]];
        fset_add(S, fg);
        if (any_missing && !miss[g]) continue;
        int no = 0;
        for (int i = 0; i < nv; i++) ops[no++] = vals[i];
        if (goals_too)
            for (int k = 0; k < p->ng; k++)
                if (k == g ? miss[k] >= 2 : miss[k] >= 1) ops[no++] = p->gid[k];
        for (int o = 0; o < NOFF; o++)
            if (p->offmask[0] >> o & 1) fset_add(S, mulm(MINV[o], fg));
        if (p->flags & I_NEG) fset_add(S, subm(0, fg));
        if (p->has_half) fset_add(S, addm(fg, fg));
        for (int o = 0; o < NOFF; o++) {
            if (p->offmask[1] >> o & 1) {
                u64 t = mulm(MINV[o], fg);
                for (int i = 0; i < no; i++) fset_add(S, subm(t, ph[ops[i]]));
            }
            if (p->offmask[2] >> o & 1) {
                for (int i = 0; i < no; i++) {
                    fset_add(S, mulm(MINV[o], addm(fg, ph[ops[i]])));     /* s(v) - a */
                    fset_add(S, subm(mulm(MOFF[o], ph[ops[i]]), fg));     /* s(a) - v */
                }
                if (o) fset_add(S, mulm(fg, MSELF[o]));                     /* s(v) - v */
            }
        }
        if (p->flags & I_ADD3)
            for (int i = 0; i < no; i++)
                for (int j = i; j < no; j++) fset_add(S, subm(subm(fg, ph[ops[i]]), ph[ops[j]]));
    }
}

/* A generator for the children of state s at depth g of threshold T: the empty registers listed. */
static void gen_begin(gen_t *G, P *p, const st_t *s, int g, int T, int mode) {
    memset(G, 0, sizeof *G);
    G->p = p;
    G->s = s;
    G->g = g;
    G->T = T;
    G->mode = mode;
    G->final = T - g == 1;
    for (int r = 0; r < p->R; r++)
        if (!s->id[r]) G->empties[G->ne++] = r;
    for (int k = 0; k < p->ng; k++) G->gphi[k] = p->st.phi[p->gid[k]];
}

static void generate(P *p, const st_t *s, int g, int T, int mode) {
    gen_t G;
    gen_begin(&G, p, s, g, T, mode);
    G.goal_only = mode == 1;
    /* as many goal copies missing as instructions left: each of them must write one (a copy needs
     * its own last write), so only goals are made */
    int missing = 0, miss[GMAX] = {0};
    {
        int hg[GMAX] = {0};
        for (int r = 0; r < p->R; r++)
            if (s->id[r] && p->st.vf[s->id[r]].gidx >= 0) hg[(int)p->st.vf[s->id[r]].gidx]++;
        for (int k = 0; k < p->ng; k++) {
            miss[k] = hg[k] < p->need[k] ? p->need[k] - hg[k] : 0;
            missing += miss[k];
        }
        if (missing >= T - g) {
            mode = G.mode = 1;
            G.goal_only = 1;
        }
    }
    /* distinct values held, with how many registers hold each */
    int vals[RMAX], cnt[RMAX], nv = 0;
    int mintz = 255;
    for (int r = 0; r < p->R; r++) {
        int id = s->id[r];
        if (!id) continue;
        int k;
        for (k = 0; k < nv && vals[k] != id; k++) {}
        if (k == nv) {
            vals[nv] = id;
            cnt[nv++] = 0;
        }
        cnt[k]++;
        if (p->st.vf[id].len && p->st.vf[id].tz < mintz) mintz = p->st.vf[id].tz;
    }
    /* two left: a result that is not a goal is read by the last instruction; when a goal copy is
     * missing, that one makes a missing goal (the result destroys no needed copy: two would then
     * be missing with one instruction left) */
    if (mode == 2) build_f2(p, vals, nv, miss, 0);
    else if (mode == 0 && missing >= 2 && T - g == missing + 1) {
        /* one instruction more than goal copies missing: all but one of the instructions left write
         * a goal copy that is missing now, each its own (none is destroyed: that would need one
         * more), so a result that is not a goal is read by one of them (no dead instruction), whose
         * other operands are values held now or goal copies made in between: the set of two
         * instructions from the end, with those goals among the values held */
        build_f2(p, vals, nv, miss, 1);
        mode = G.mode = 2;
    }
    /* halvings still needed: when they fill the remaining budget, nothing else can come next
     * (no other instruction lowers the smallest valuation held) */
    int held[GMAX] = {0};
    for (int r = 0; r < p->R; r++)
        if (s->id[r] && p->st.vf[s->id[r]].gidx >= 0) held[(int)p->st.vf[s->id[r]].gidx]++;
    int gtz = 255;
    for (int k = 0; k < p->ng; k++)
        if (held[k] < p->need[k] && p->st.vf[p->gid[k]].tz < gtz) gtz = p->st.vf[p->gid[k]].tz;
    int only_halvings = mintz > gtz && mintz - gtz >= T - g;

    int maxlen = 0;
    for (int i = 0; i < nv; i++)
        if (vlen(p, vals[i]) > maxlen) maxlen = vlen(p, vals[i]);
    buf_reserve(p, 3 * (size_t)maxlen + 8);
    int *t0p = p->bpos[0], *t1p = p->bpos[1], *t2p = p->bpos[2];
    i64 *t0c = p->bcoef[0], *t1c = p->bcoef[1], *t2c = p->bcoef[2];
    int fl = p->flags;
    /* each held value's fingerprint shifted by each offset, once: the moves, subtractions and adds
     * below combine these (the shift distributes over the sum, so shift(a + b) = shift(a) + shift(b)) */
    u64 sf[RMAX][NOFF];
    int offs = p->offmask[0] | p->offmask[1] | p->offmask[2];
    for (int i = 0; i < nv; i++)
        for (int o = 0; o < NOFF; o++)
            if (offs >> o & 1) sf[i][o] = mulm(MOFF[o], p->st.phi[vals[i]]);
    /* the store may move whenever a child's value is interned: no pointer into it is kept */
#define ph (p->st.phi)
#define ap (vpos(p, a))
#define ac (vcoef(p, a))

    for (int i = 0; i < nv; i++) {
        int a = vals[i];
        int na = vlen(p, a);
        u64 fa = ph[a];
        /* halvings */
        if ((fl & (I_DIV4 | I_DIVA | I_DIV3 | I_DIVQ)) && na && phi_pass(&G, mulm(INV2, fa))) {
            int even = 1;
            for (int k = 0; k < na && even; k++) even = !(ac[k] & 1);
            if (even) {
                for (int k = 0; k < na; k++) {
                    t0p[k] = ap[k];
                    t0c[k] = ac[k] / 2;
                }
                if (cand(&G, t0p, t0c, na)) emit_halving(&G, a);
            }
        }
        if (only_halvings) continue;
        /* moves */
        for (int o = 0; o < NOFF; o++) {
            if (!(p->offmask[0] >> o & 1) || !phi_pass(&G, sf[i][o])) continue;
            int n = v_shift(p, ap, ac, na, o, t0p, t0c);
            if (!cand(&G, t0p, t0c, n)) continue;
            int ops[1] = {a};
            emit_single(&G, F_MOV, ops, 1, o);
        }
        if ((fl & I_NEG) && phi_pass(&G, subm(0, fa))) {
            for (int k = 0; k < na; k++) {
                t0p[k] = ap[k];
                t0c[k] = -ac[k];
            }
            if (cand(&G, t0p, t0c, na)) {
                int ops[1] = {a};
                emit_single(&G, F_NEG, ops, 1, 0);
            }
        }
        /* subtractions: shift(a) - b, b may be a (even the same register) */
        if (p->offmask[2]) {
            for (int j = 0; j < nv; j++) {
                int b = vals[j];
                u64 fb = ph[b];
                for (int o = 0; o < NOFF; o++) {
                    if (!(p->offmask[2] >> o & 1) || !phi_pass(&G, subm(sf[i][o], fb))) continue;
                    int n = v_shift(p, ap, ac, na, o, t1p, t1c);
                    if (n < 0) continue;
                    n = v_add(p, t1p, t1c, n, vpos(p, b), vcoef(p, b), vlen(p, b), -1, t0p, t0c);
                    if (!cand(&G, t0p, t0c, n)) continue;
                    int ops[2] = {a, b};
                    emit_single(&G, F_SUB, ops, 2, o);
                }
            }
        }
        /* two-operand adds: shift(a + b), a and b in different registers */
        if (p->offmask[1]) {
            for (int j = i; j < nv; j++) {
                if (j == i && cnt[i] < 2) continue;
                int b = vals[j];
                int ns = -1;
                for (int o = 0; o < NOFF; o++) {
                    if (!(p->offmask[1] >> o & 1) || !phi_pass(&G, addm(sf[i][o], sf[j][o]))) continue;
                    if (ns < 0) ns = v_add(p, ap, ac, na, vpos(p, b), vcoef(p, b), vlen(p, b), 1, t1p, t1c);
                    int n = ns ? v_shift(p, t1p, t1c, ns, o, t0p, t0c) : 0;
                    if (!cand(&G, t0p, t0c, n)) continue;
                    int ops[2] = {a, b};
                    emit_single(&G, F_ADD2, ops, 2, o);
                }
            }
        }
        /* three-operand add */
        if (fl & I_ADD3) {
            for (int j = i; j < nv; j++) {
                for (int k = j; k < nv; k++) {
                    int need_i = 1 + (j == i) + (k == i), need_j = 1 + (k == j);
                    if (cnt[i] < need_i || cnt[j] < need_j) continue;
                    int b = vals[j], c = vals[k];
                    if (!phi_pass(&G, addm(addm(fa, ph[b]), ph[c]))) continue;
                    int n1 = v_add(p, ap, ac, na, vpos(p, b), vcoef(p, b), vlen(p, b), 1, t1p, t1c);
                    int n = v_add(p, t1p, t1c, n1, vpos(p, c), vcoef(p, c), vlen(p, c), 1, t2p, t2c);
                    if (!cand(&G, t2p, t2c, n)) continue;
                    int ops[3] = {a, b, c};
                    emit_single(&G, F_ADD3, ops, 3, 0);
                }
            }
        }
    }
#undef ph
#undef ap
#undef ac
    /* zeros, only in sets that cannot do without them (see exact.py) */
    if (p->zero_ok && mode != 1 && !only_halvings && phi_pass(&G, 0)) {
        G.cid = 1;
        G.cf = p->st.vf[1];
        if (fl & I_RES1) emit_single(&G, F_RES1, NULL, 0, 0);
        if (fl & I_RES2) {
            /* two destinations: empty registers first, then values already read */
            int c2[RMAX], nc = 0;
            for (int i = 0; i < G.ne; i++) c2[nc++] = G.empties[i];
            int firstval = nc;
            for (int r = 0; r < p->R; r++)
                if (s->id[r] && !(s->fresh >> r & 1)) c2[nc++] = r;
            int want = G.ne < 2 ? G.ne : 2;
            for (int a = 0; a < nc; a++)
                for (int b = a + 1; b < nc; b++) {
                    int got = (a < firstval) + (b < firstval);
                    if (got != want || (want >= 1 && a != 0) || (want == 2 && b != 1)) continue;
                    st_t ns = *s;
                    ns.id[c2[a]] = 1;
                    ns.id[c2[b]] = 1;
                    ns.fresh = (uint8_t)(ns.fresh | (1 << c2[a]) | (1 << c2[b]));
                    int regs[4] = {c2[a], c2[b], -1, -1};
                    push_child(&G, &ns, F_RES2, 0, regs);
                }
        }
    }
}

/* ------------------------------------------------------------------ the relaxed problem */
/* Halvings free (any operand may be taken divided by 2^e), copies free (operands may repeat),
 * no register limit (nothing is ever overwritten): a program with n other instructions and h
 * halvings gives a relaxed derivation of at most n steps (see exact.py), so the relaxed optimum
 * N* bounds n and every program has at least H + N* instructions. Relative scalings only matter
 * (a common factor is a free halving later), so one operand is always taken whole. */

/* out = shift(a / 2^ea, off) - b / 2^eb (sign -1) or shift(a / 2^ea + b / 2^eb, off) (sign +1,
 * shift applied after): merged term lists; -1 when an Atom leaves the window */
static int v_comb(P *p, int a, int ea, int b, int eb, int sign, int off, int shift_sum, int *op, i64 *oc) {
    const int *ap = vpos(p, a), *bp = vpos(p, b);
    const i64 *ac = vcoef(p, a), *bc = vcoef(p, b);
    int na = vlen(p, a), nb = vlen(p, b);
    int dx = OFFX[off], dy = OFFY[off], d = dx + (dy << 8);
    int da = shift_sum ? 0 : d;
    int i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        int pa = i < na ? ap[i] + da : 0x7FFFFFFF, pb = j < nb ? bp[j] : 0x7FFFFFFF;
        i64 c;
        int pos;
        if (pa < pb) {
            pos = pa;
            c = ac[i++] >> ea;
        } else if (pb < pa) {
            pos = pb;
            c = sign * (bc[j++] >> eb);
        } else {
            pos = pa;
            c = (ac[i++] >> ea) + sign * (bc[j++] >> eb);
            if (!c) continue;
        }
        if (c >= COEF_LIMIT || c <= -COEF_LIMIT) p->overflow = 1;
        op[n] = pos;
        oc[n++] = c;
    }
    if (shift_sum) {
        for (int k = 0; k < n; k++) op[k] += d;
    }
    for (int k = 0; k < n; k++) {
        int x = pos_x(op[k]), y = pos_y(op[k]);
        if (x > POS_LIMIT || x < -POS_LIMIT || y > POS_LIMIT || y < -POS_LIMIT) return -1;
    }
    return n;
}

static u64 INV2P[64];
static u64 INV1P[64];           /* 1 / (1 + 2^-e) */
static u64 INV3P[64][64];       /* 1 / (1 + 2^-e1 + 2^-e2) */
static u64 INVSELF[NOFF][2][64]; /* 1 / (m 2^-e - 1) and 1 / (m - 2^-e): s(v) / 2^e - v, s(v) - v / 2^e */

static void relaxed_tables(void) {
    static int done;
    if (done) return;
    for (int e = 0; e < 64; e++) INV2P[e] = e ? mulm(INV2P[e - 1], INV2) : 1;
    for (int e = 0; e < 64; e++) INV1P[e] = invm(addm(1, INV2P[e]));
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 64; b++) INV3P[a][b] = invm(addm(addm(1, INV2P[a]), INV2P[b]));
    for (int o = 0; o < NOFF; o++)
        for (int e = 0; e < 64; e++) {
            u64 k0 = subm(mulm(MOFF[o], INV2P[e]), 1), k1 = subm(MOFF[o], INV2P[e]);
            INVSELF[o][0][e] = k0 ? invm(k0) : 0;
            INVSELF[o][1][e] = k1 ? invm(k1) : 0;
        }
    done = 1;
}

/* relaxed: a result equal to a held value divided by 2^j (j >= 0) adds nothing (free halving) */
static int relaxed_redundant(P *p, const st_t *s, const int *pos, const i64 *c, int n) {
    if (!n) return 1;
    int tz = 64;
    for (int i = 0; i < n; i++) {
        int z = __builtin_ctzll((u64)(c[i] < 0 ? -c[i] : c[i]));
        if (z < tz) tz = z;
    }
    for (int r = 0; r < p->R; r++) {
        int id = s->id[r];
        if (id <= 1 || vlen(p, id) != n || p->st.vf[id].tz < tz) continue;
        const int *hp = vpos(p, id);
        const i64 *hc = vcoef(p, id);
        int sh = p->st.vf[id].tz - tz, k;
        for (k = 0; k < n; k++)
            if (hp[k] != pos[k] || (hc[k] >> sh) != c[k]) break;
        if (k == n) return 1;
    }
    return 0;
}

static inline int rphi_pass(gen_t *G, u64 f) {
    if (G->mode == 0) return 1;
    return fset_has(G->p->f2, f);
}

/* two steps left: the value v made now must be a goal 2^j g or an operand of a last instruction
 * that makes one (whole: f2; divided by 2^e, e >= 1, the other operands whole: f3). Every
 * scaling is at most E (the halvings a program of the refuted length can have). */
static void build_relaxed_f2(P *p, const int *vals, int nv, int E, int tzf, int J) {
    fset_t *B0 = p->f2, *B1 = p->f3;
    fset_clear(B0);
    fset_clear(B1);
    const u64 *ph = p->st.phi;
    int fl = p->flags;
    /* a held value taken divided by 2^e by the last step: e <= its valuation above tzf */
#define ECAP(v) (p->st.vf[v].tz - tzf < E ? p->st.vf[v].tz - tzf : E)
    for (int g = 0; g < p->ng; g++) {
        u64 t = ph[p->gid[g]];
        for (int j = 0; j <= J; j++, t = addm(t, t)) {
            fset_add(B0, t);
            for (int o = 1; o < NOFF; o++)
                if (p->offmask[0] >> o & 1) fset_add(B0, mulm(MINV[o], t));
            if (fl & I_NEG) fset_add(B0, subm(0, t));
            for (int o = 0; o < NOFF; o++) {
                u64 m = MOFF[o], mi = MINV[o];
                if (p->offmask[1] >> o & 1) {
                    u64 tm = mulm(mi, t);
                    for (int i = 0; i < nv; i++) {
                        fset_add(B1, subm(tm, ph[vals[i]]));
                        for (int e = 0; e <= ECAP(vals[i]); e++) fset_add(B0, subm(tm, mulm(INV2P[e], ph[vals[i]])));
                    }
                    for (int e = 0; e <= E; e++) fset_add(B0, mulm(tm, INV1P[e]));
                }
                if (p->offmask[2] >> o & 1) {
                    for (int i = 0; i < nv; i++) {
                        u64 fa = ph[vals[i]];
                        fset_add(B1, mulm(mi, addm(t, fa)));
                        fset_add(B1, subm(mulm(m, fa), t));
                        for (int e = 0; e <= ECAP(vals[i]); e++) {
                            u64 fae = mulm(INV2P[e], fa);
                            fset_add(B0, mulm(mi, addm(t, fae)));
                            fset_add(B0, subm(mulm(m, fae), t));
                        }
                    }
                    for (int e = 0; e <= E; e++) {
                        if (INVSELF[o][0][e]) fset_add(B0, mulm(t, INVSELF[o][0][e]));
                        if (INVSELF[o][1][e]) fset_add(B0, mulm(t, INVSELF[o][1][e]));
                    }
                }
            }
            if (fl & I_ADD3) {
                for (int i = 0; i < nv; i++) {
                    u64 fa = ph[vals[i]];
                    for (int k = 0; k < nv; k++) {
                        u64 fb = ph[vals[k]];
                        for (int e3 = 0; e3 <= ECAP(vals[k]); e3++) fset_add(B1, subm(subm(t, fa), mulm(INV2P[e3], fb)));
                        if (k < i) continue;
                        for (int e2 = 0; e2 <= ECAP(vals[i]); e2++)
                            for (int e3 = 0; e3 <= ECAP(vals[k]); e3++)
                                fset_add(B0, subm(subm(t, mulm(INV2P[e2], fa)), mulm(INV2P[e3], fb)));
                    }
                    for (int e = 0; e <= E; e++)
                        for (int e3 = 0; e3 <= ECAP(vals[i]); e3++)
                            fset_add(B0, mulm(subm(t, mulm(INV2P[e3], fa)), INV1P[e]));
                }
                for (int e1 = 0; e1 <= E; e1++)
                    for (int e2 = 0; e2 <= E; e2++) fset_add(B0, mulm(t, INV3P[e1][e2]));
            }
        }
    }
    /* v taken divided by 2^e (e >= 1) must be in B1: v itself is then in B1 * 2^e */
    if (B1->n >= (1 << FSET_BITS) / 2) {
        B0->n = 1 << FSET_BITS;          /* overflowed: let everything through */
        return;
    }
    for (int i = 0; i < B1->n; i++) {
        u64 w = B1->list[i];
        for (int e = 1; e <= E; e++) {
            w = addm(w, w);
            fset_add(B0, w);
        }
    }

#undef ECAP
}

static void generate_relaxed(P *p, const st_t *s, int g, int T, int mode) {
    gen_t G;
    gen_begin(&G, p, s, g, T, mode);
    if (!G.ne) return;      /* out of registers: the caller caps the relaxed depth */
    int vals[RMAX], nv = 0;
    for (int r = 0; r < p->R; r++) {
        int id = s->id[r];
        if (!id) continue;
        int k;
        for (k = 0; k < nv && vals[k] != id; k++) {}
        if (k == nv) vals[nv++] = id;
    }
    /* a real program refuted at length L0 = H + T with n >= g + h(parent) other instructions has
     * at most L0 - n halvings: no operand is scaled by more, no goal taken from 2^j g with more */
    int hpar = heur_state(p, s);
    int emax = p->hmin + T - g - hpar;
    if (emax < 0) return;
    if (emax > 60) emax = 60;     /* beyond the coefficients' 2^60: no value is that divisible */
    /* an operand taken divided by 2^e is a value of the program, which has at most emax halvings:
     * its valuation in units is at least tzmin */
    int tzmin = p->unit - emax;
    G.emax = emax;
    /* the last step is the T-th: a program of H + T instructions then has at most H halvings, so
     * what that step takes is at least H halvings deep at most, and the goal at most 2^(H+1) g */
    if (G.mode == 2) build_relaxed_f2(p, vals, nv, emax, p->unit - p->hmin, emax < p->hmin + 1 ? emax : p->hmin + 1);
    if (G.mode == 1) {
        fset_clear(p->f2);
        fset_clear(p->f3);
        for (int k = 0; k < p->ng; k++) {
            u64 f = p->st.phi[p->gid[k]];
            for (int j = 0; j <= emax && j < 62; j++) {
                fset_add(p->f2, f);
                f = addm(f, f);
            }
        }
    }
    int maxlen = 0;
    for (int i = 0; i < nv; i++)
        if (vlen(p, vals[i]) > maxlen) maxlen = vlen(p, vals[i]);
    buf_reserve(p, 3 * (size_t)maxlen + 8);
    int *t0p = p->bpos[0], *t1p = p->bpos[1];
    i64 *t0c = p->bcoef[0], *t1c = p->bcoef[1];
    int fl = p->flags;
#define ph (p->st.phi)
#define TZ(v) ((int)p->st.vf[v].tz)
    for (int i = 0; i < nv; i++) {
        int a = vals[i];
        int na = vlen(p, a);
        for (int o = 1; o < NOFF; o++) {
            if (!(p->offmask[0] >> o & 1) || !rphi_pass(&G, mulm(MOFF[o], ph[a]))) continue;
            int n = v_shift(p, vpos(p, a), vcoef(p, a), na, o, t0p, t0c);
            if (n < 0 || relaxed_redundant(p, s, t0p, t0c, n) || !cand(&G, t0p, t0c, n)) continue;
            int ops[1] = {a};
            emit_single(&G, F_MOV, ops, 1, o);
        }
        if ((fl & I_NEG) && rphi_pass(&G, subm(0, ph[a]))) {
            for (int k = 0; k < na; k++) {
                t0p[k] = vpos(p, a)[k];
                t0c[k] = -vcoef(p, a)[k];
            }
            if (!relaxed_redundant(p, s, t0p, t0c, na) && cand(&G, t0p, t0c, na)) {
                int ops[1] = {a};
                emit_single(&G, F_NEG, ops, 1, 0);
            }
        }
        for (int j = 0; j < nv; j++) {
            int b = vals[j];
            /* subtractions shift(a / 2^ea) - b / 2^eb */
            for (int ea = 0; ea <= emax && ea <= TZ(a) - tzmin; ea++)
                for (int eb = 0; eb <= emax && eb <= TZ(b) - tzmin; eb++) {
                    if (ea && eb) break;
                    if (a == b && ea == eb && ea) continue;
                    for (int o = 0; o < NOFF; o++) {
                        if (!(p->offmask[2] >> o & 1)) continue;
                        if (!rphi_pass(&G, subm(mulm(MOFF[o], mulm(INV2P[ea], ph[a])), mulm(INV2P[eb], ph[b]))))
                            continue;
                        int n = v_comb(p, a, ea, b, eb, -1, o, 0, t0p, t0c);
                        if (n < 0 || relaxed_redundant(p, s, t0p, t0c, n) || !cand(&G, t0p, t0c, n)) continue;
                        int ops[2] = {a, b};
                        emit_single(&G, F_SUB, ops, 2, o);
                    }
                }
            /* adds shift(a / 2^ea + b / 2^eb) */
            if (j < i) continue;
            for (int ea = 0; ea <= emax && ea <= TZ(a) - tzmin; ea++)
                for (int eb = 0; eb <= emax && eb <= TZ(b) - tzmin; eb++) {
                    if (ea && eb) break;
                    if (a == b && ea > eb) continue;
                    u64 fs = addm(mulm(INV2P[ea], ph[a]), mulm(INV2P[eb], ph[b]));
                    for (int o = 0; o < NOFF; o++) {
                        if (!(p->offmask[1] >> o & 1) || !rphi_pass(&G, mulm(MOFF[o], fs))) continue;
                        int n = v_comb(p, a, ea, b, eb, 1, o, 1, t0p, t0c);
                        if (n < 0 || relaxed_redundant(p, s, t0p, t0c, n) || !cand(&G, t0p, t0c, n)) continue;
                        int ops[2] = {a, b};
                        emit_single(&G, F_ADD2, ops, 2, o);
                    }
                }
            /* three-operand adds a / 2^ea + b / 2^eb + c / 2^ec */
            if (!(fl & I_ADD3)) continue;
            for (int k = j; k < nv; k++) {
                int c = vals[k];
                for (int ea = 0; ea <= emax && ea <= TZ(a) - tzmin; ea++)
                    for (int eb = 0; eb <= emax && eb <= TZ(b) - tzmin; eb++)
                        for (int ec = 0; ec <= emax && ec <= TZ(c) - tzmin; ec++) {
                            if (ea && eb && ec) break;
                            if ((a == b && ea > eb) || (b == c && eb > ec)) continue;
                            u64 f = addm(addm(mulm(INV2P[ea], ph[a]), mulm(INV2P[eb], ph[b])), mulm(INV2P[ec], ph[c]));
                            if (!rphi_pass(&G, f)) continue;
                            int n1 = v_comb(p, a, ea, b, eb, 1, 0, 1, t1p, t1c);
                            int n = 0, q = 0, r = 0;
                            const int *cp = vpos(p, c);
                            const i64 *cc = vcoef(p, c);
                            int ncn = vlen(p, c);
                            while (q < n1 || r < ncn) {
                                if (r >= ncn || (q < n1 && t1p[q] < cp[r])) {
                                    t0p[n] = t1p[q];
                                    t0c[n++] = t1c[q++];
                                } else if (q >= n1 || cp[r] < t1p[q]) {
                                    t0p[n] = cp[r];
                                    t0c[n++] = cc[r++] >> ec;
                                } else {
                                    i64 x = t1c[q] + (cc[r] >> ec);
                                    if (x >= COEF_LIMIT || x <= -COEF_LIMIT) p->overflow = 1;
                                    if (x) {
                                        t0p[n] = t1p[q];
                                        t0c[n++] = x;
                                    }
                                    q++;
                                    r++;
                                }
                            }
                            if (n < 0 || relaxed_redundant(p, s, t0p, t0c, n) || !cand(&G, t0p, t0c, n)) continue;
                            int ops[3] = {a, b, c};
                            emit_single(&G, F_ADD3, ops, 3, 0);
                        }
            }
        }
    }
#undef ph
#undef TZ
}

static int cmp_child_key(const void *x, const void *y) {
    const child_t *a = x, *b = y;
    for (int i = 0; i < RMAX; i++)
        if (a->key[i] != b->key[i]) return a->key[i] < b->key[i] ? -1 : 1;
    return a->h - b->h;
}

static int g_R;

static int cmp_child_h(const void *x, const void *y) {
    const child_t *a = x, *b = y;
    if (a->h != b->h) return a->h - b->h;
    for (int i = 0; i < g_R; i++)
        if (a->key[i] != b->key[i]) return a->key[i] < b->key[i] ? -1 : 1;
    return 0;
}

/* ------------------------------------------------------------------ garbage collection */
/* Keep only the values the search still refers to (states on the stack and their pending
 * children, goals, inputs); renumber them. The transposition table refers to values too: it is
 * cleared (it only saves work; nothing it prunes is needed for correctness). */
static void store_gc(P *p, st_t *extra) {
    store_t *S = &p->st;
    int nv = S->nv;
    int *map = calloc((size_t)nv, sizeof(int));
    if (!map) abort();
    for (int i = 0; i < nv; i++) map[i] = -1;
    map[0] = map[1] = 1;
#define MARKST(st)                                                   \
    for (int r_ = 0; r_ < p->R; r_++)                                \
        if ((st)->id[r_] > 1) map[(st)->id[r_]] = 1;
    for (int g = 0; g < p->ng; g++) map[p->gid[g]] = 1;
    MARKST(&p->root);
    if (extra) { MARKST(extra); }
    for (int d = 0; d < p->depth; d++) { MARKST(&p->fr[d].s); }
    for (size_t c = 0; c < p->nchild; c++) { MARKST(&p->ch[c].s); }
    int nn = 0;
    size_t nt = 0;
    for (int id = 0; id < nv; id++)
        if (map[id] >= 0) {
            int n = vlen(p, id);
            if (nn != id || nt != S->off[id]) {
                memmove(S->tpos + nt, S->tpos + S->off[id], (size_t)n * sizeof(int));
                memmove(S->tcoef + nt, S->tcoef + S->off[id], (size_t)n * sizeof(i64));
                S->hash[nn] = S->hash[id];
                S->phi[nn] = S->phi[id];
                S->vf[nn] = S->vf[id];
            }
            S->off[nn] = (u32)nt;
            nt += (size_t)n;
            map[id] = nn++;
        }
    S->nv = nn;
    S->nt = nt;
    memset(S->sym, 0, (size_t)nn * NSYM * sizeof(int));
    memset(S->table, 0, ((size_t)S->tmask + 1) * sizeof(slot_t));
    for (int id = 1; id < nn; id++) table_put(S, S->hash[id], id);
#define REMAP(st)                                                    \
    for (int r_ = 0; r_ < p->R; r_++)                                \
        if ((st)->id[r_] > 0) (st)->id[r_] = map[(st)->id[r_]];
    for (int g = 0; g < p->ng; g++) p->gid[g] = map[p->gid[g]];
    REMAP(&p->root);
    if (extra) { REMAP(extra); }
    for (int d = 0; d < p->depth; d++) { REMAP(&p->fr[d].s); }
    for (size_t c = 0; c < p->nchild; c++) { REMAP(&p->ch[c].s); }
#undef MARKST
#undef REMAP
    free(map);
    for (int d = 0; d < p->depth; d++) canon_key(p, &p->fr[d].s, p->fr[d].key);
    for (size_t c = 0; c < p->nchild; c++) canon_key(p, &p->ch[c].s, p->ch[c].key);
    memset(p->tt, 0, ((size_t)p->ttmask + 1) * sizeof(tte_t));
    p->gcs++;
}

static void push_frame(P *p, const st_t *s, int g, const u32 *key) {
    if (p->depth + 1 > p->capfr) {
        p->capfr = p->capfr ? p->capfr * 2 : 64;
        p->fr = xrealloc(p->fr, p->capfr * sizeof(frame_t));
    }
    frame_t *f = &p->fr[p->depth++];
    f->s = *s;
    f->g = g;
    memcpy(f->key, key, sizeof(u32) * RMAX);
    f->ch0 = p->nchild;
    int r = p->T - g;
    if (p->relaxed) generate_relaxed(p, s, g, p->T, r == 1 ? 1 : r == 2 ? 2 : 0);
    else generate(p, s, g, p->T, r == 1 ? 1 : r == 2 ? 2 : 0);
    /* canonical duplicates: sort by key, keep one */
    size_t n = p->nchild - f->ch0;
    child_t *c = p->ch + f->ch0;
    for (size_t i = 0; i < n; i++)
        for (int k = p->R; k < RMAX; k++) c[i].key[k] = 0;
    qsort(c, n, sizeof(child_t), cmp_child_key);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && !memcmp(c[m - 1].key, c[i].key, sizeof(u32) * RMAX)) continue;
        if (m != i) c[m] = c[i];
        m++;
    }
    g_R = p->R;
    qsort(c, m, sizeof(child_t), cmp_child_h);
    p->nchild = f->ch0 + m;
    f->nch = m;
    f->next = 0;
}

/* ------------------------------------------------------------------ API */
void *ex_new(int R, int nch, int flags, int symmask, int zero_ok, int ngoal_vals, const int *goal_len,
             const int *goal_terms, const int *goal_need, int unit_exp, int tt_bits, int start_bound, int limit) {
    if (R > RMAX || R < 1 || ngoal_vals > GMAX || ngoal_vals < 1 || nch > R || tt_bits < 10 || tt_bits > 30)
        return NULL;
    P *p = calloc(1, sizeof(P));
    if (!p) return NULL;
    p->R = R;
    p->nch = nch;
    p->flags = flags;
    p->symmask = symmask | 1;
    p->zero_ok = zero_ok;
    p->has4 = !!(flags & I_ADD3);
    p->has_sa = !!(flags & (I_ADDX | I_ADD2X | I_SUBX | I_SUB2X));
    p->selfsub = !!(flags & (I_SUBX | I_SUB2X));
    p->has_half = !!(flags & (I_DIV4 | I_DIVA | I_DIV3 | I_DIVQ));
    p->has_add = !!(flags & (I_ADD | I_ADD3 | I_ADDX | I_ADD2X | I_SUB | I_SUBX | I_SUB2X));
    p->kadd = p->has4 ? 3 : 2;
    p->maxread = p->has4 ? 3 : 2;
    p->offmask[0] = ((flags & I_MOV) ? 1 : 0) | ((flags & I_MOVX) ? UNIT_OFFS : 0) | ((flags & I_MOV2X) ? DOUBLE_OFFS : 0);
    p->offmask[1] = ((flags & (I_ADD | I_ADD2X)) ? 1 : 0) | ((flags & I_ADDX) ? UNIT_OFFS : 0) |
                    ((flags & I_ADD2X) ? DOUBLE_OFFS : 0);
    p->offmask[2] = ((flags & (I_SUB | I_SUB2X)) ? 1 : 0) | ((flags & I_SUBX) ? UNIT_OFFS : 0) |
                    ((flags & I_SUB2X) ? DOUBLE_OFFS : 0);
    phi_init();
    build_shift_table(p);
    store_t *S = &p->st;
    S->tmask = (1u << 16) - 1;
    S->table = calloc(S->tmask + 1, sizeof(slot_t));
    if (!S->table) abort();
    /* id 0: "empty register", a placeholder (put in the table with id 0, i.e. not at all);
     * id 1: the zero value */
    store_intern(p, NULL, NULL, 0, hash_terms(NULL, NULL, 0), NULL);
    store_intern(p, NULL, NULL, 0, hash_terms(NULL, NULL, 0), NULL);
    /* goals, and their classes */
    int t = 0;
    for (int g = 0; g < ngoal_vals; g++) {
        int n = goal_len[g];
        term_t *tt = xrealloc(NULL, sizeof(term_t) * (size_t)(n ? n : 1));
        for (int i = 0; i < n; i++, t++) {
            tt[i].pos = pack(goal_terms[4 * t], goal_terms[4 * t + 1], goal_terms[4 * t + 2]);
            tt[i].c = (i64)goal_terms[4 * t + 3] << unit_exp;
        }
        qsort(tt, (size_t)n, sizeof(term_t), cmp_term);
        int *gp = xrealloc(NULL, sizeof(int) * (size_t)(n ? n : 1));
        i64 *gc = xrealloc(NULL, sizeof(i64) * (size_t)(n ? n : 1));
        for (int i = 0; i < n; i++) {
            gp[i] = tt[i].pos;
            gc[i] = tt[i].c;
        }
        free(tt);
        u32 h = hash_terms(gp, gc, n);
        int id = store_intern(p, gp, gc, n, h, NULL);
        p->gid[g] = id;
        p->ghash[g] = h;
        p->need[g] = goal_need[g];
        p->gw[g] = (int)S->vf[id].wt;
        p->wsum += p->gw[g] * goal_need[g];
        /* its class, unless a goal before it had the same */
        int tz = S->vf[id].tz, j;
        u32 ch = class_hash(gp, gc, n, tz);
        for (j = 0; j < p->ncls; j++)
            if (p->cls[j].h == ch && class_equal(&p->cls[j], gp, gc, n, tz)) break;
        if (j == p->ncls) {
            gclass_t *c = &p->cls[p->ncls++];
            c->n = n;
            c->h = ch;
            c->w = p->gw[g];
            c->pos = xrealloc(NULL, sizeof(int) * (size_t)(n ? n : 1));
            c->c = xrealloc(NULL, sizeof(i64) * (size_t)(n ? n : 1));
            int base = gp[0] & 0xFFFF;
            i64 sign = gc[0] < 0 ? -1 : 1;
            for (int i = 0; i < n; i++) {
                c->pos[i] = gp[i] - base;
                c->c[i] = sign * (gc[i] >> tz);
            }
        }
        free(gp);
        free(gc);
    }
    p->ng = ngoal_vals;
    for (int g = 0; g < p->ng; g++) {
        int id = p->gid[g];
        const int *gp = vpos(p, id);
        const i64 *gc = vcoef(p, id);
        int tz = S->vf[id].tz, n = vlen(p, id);
        p->gbase[g] = gp[0] & 0xFFFF;
        p->gsign[g] = gc[0] < 0 ? -1 : 1;
        p->gtzv[g] = tz;
        u32 ch = class_hash(gp, gc, n, tz);
        p->gcl[g] = -1;
        for (int j = 0; j < p->ncls; j++)
            if (p->cls[j].h == ch && class_equal(&p->cls[j], gp, gc, n, tz)) p->gcl[g] = j;
        p->ggrp[g] = g;
        for (int k = 0; k < g; k++)
            if (p->gcl[k] == p->gcl[g] && p->gbase[k] == p->gbase[g] && p->gsign[k] == p->gsign[g]) {
                p->ggrp[g] = p->ggrp[k];
                break;
            }
    }
    relaxed_tables();
    for (int g = 0; g < p->ng; g++)
        features(p, vpos(p, p->gid[g]), vcoef(p, p->gid[g]), vlen(p, p->gid[g]), p->ghash[g], &S->vf[p->gid[g]]);
    memset(&p->root, 0, sizeof p->root);
    p->f2 = calloc(1, sizeof(fset_t));
    p->f3 = calloc(1, sizeof(fset_t));
    if (!p->f2 || !p->f3) abort();
    p->ttmask = (1u << tt_bits) - 1;
    p->tt = calloc((size_t)p->ttmask + 1, sizeof(tte_t));
    if (!p->tt) {
        free(p);
        return NULL;
    }
    p->bound = start_bound;
    p->limit = limit;
    p->status = ST_RUNNING;
    return p;
}

/* the input: channel z in register z, 2^in_exp (i.e. 1 in units of 2^-(d + X)) at the centre */
void ex_set_input(void *h, int in_exp) {
    P *p = h;
    for (int z = 0; z < p->nch; z++) {
        int pp = pack(0, 0, z);
        i64 c = (i64)1 << in_exp;
        p->root.id[z] = store_intern(p, &pp, &c, 1, hash_terms(&pp, &c, 1), NULL);
    }
    p->unit = in_exp;
    p->root.fresh = 0;
}

/* make this handle search the relaxed problem (before ex_set_input); hmin: the halvings every
 * program needs */
void ex_set_relaxed(void *h, int hmin) {
    P *p = h;
    p->relaxed = 1;
    p->hmin = hmin;
    for (int g = 0; g < p->ng; g++) p->need[g] = 1;
    p->wsum = 0;
    for (int g = 0; g < p->ng; g++) {
        int id = p->gid[g];
        features(p, vpos(p, id), vcoef(p, id), vlen(p, id), p->ghash[g], &p->st.vf[id]);
    }
}

int ex_heur_root(void *h) { return heur_state((P *)h, &((P *)h)->root); }

int ex_run(void *h, long budget) {
    P *p = h;
    long stop = p->nodes + budget;
    for (;;) {
        if (p->status != ST_RUNNING) return p->status;
        if (p->overflow) {
            p->status = ST_ERROR;
            return p->status;
        }
        if (p->depth == 0) {
            if (p->bound >= p->limit) {
                p->status = ST_LIMIT;
                return p->status;
            }
            if (p->nodes >= stop) return ST_RUNNING;
            p->T = p->bound;
            p->nchild = 0;
            p->nodes++;
            int hr = heur_state(p, &p->root);
            if (hr == 0) {
                p->plen = 0;
                p->bound = 0;
                p->status = ST_FOUND;
                return p->status;
            }
            if (hr > p->T) {
                p->bound = hr;
                continue;
            }
            u32 key[RMAX] = {0};
            canon_key(p, &p->root, key);
            push_frame(p, &p->root, 0, key);
        }
        while (p->depth > 0) {
            if (p->nodes >= stop) return ST_RUNNING;
            frame_t *f = &p->fr[p->depth - 1];
            if (f->next >= f->nch) {
                tt_store(p, f->key, p->T - f->g);
                p->nchild = f->ch0;
                p->depth--;
                continue;
            }
            child_t *c = &p->ch[f->ch0 + f->next++];
            /* a share of the work: only some first instructions (the rest is another process's), or with
             * split_depth 2 only some second ones (split_share). Sound with the transposition table: see
             * split_share. */
            if (p->split_n > 1 && p->depth == (p->split_depth == 2 ? 2 : 1) && split_share(p, f) != p->split_k)
                continue;
            int g1 = f->g + 1;
            if (g1 + c->h > p->T) continue;
            int b = tt_probe(p, c->key);
            if (b >= p->T - g1) continue;
            p->nodes++;
            p->hist[g1 < 64 ? g1 : 63][(int)c->ins.fam]++;
            p->path[g1 - 1] = c->ins;
            if (c->h == 0) {
                p->plen = g1;
                p->bound = g1;
                p->status = ST_FOUND;
                p->depth = 0;
                return p->status;
            }
            if (g1 >= p->T) continue;
            st_t s = c->s;
            u32 key[RMAX];
            memcpy(key, c->key, sizeof key);
            if (p->gc_values && p->st.nv > p->gc_values) {
                store_gc(p, &s);
                memset(key, 0, sizeof key);
                canon_key(p, &s, key);
            }
            push_frame(p, &s, g1, key);   /* may move p->ch */
            if (p->overflow) break;
        }
        if (p->overflow) continue;
        if (p->depth == 0 && p->status == ST_RUNNING) p->bound = p->T + 1;
    }
}

/* how far the current iteration is: the fraction of the tree before the current path, estimated
 * from the position among its siblings at each depth (diagnostics) */
double ex_progress(void *h) {
    P *p = h;
    double done = 0, width = 1;
    for (int i = 0; i < p->depth; i++) {
        frame_t *f = &p->fr[i];
        if (!f->nch) break;
        size_t k = f->next ? f->next - 1 : 0;
        done += width * (double)k / (double)f->nch;
        width /= (double)f->nch;
    }
    return done;
}

#include <stdio.h>
/* print the states on the current path (diagnostics) */
void ex_dump(void *h) {
    P *p = h;
    for (int i = 0; i < p->depth; i++) {
        frame_t *f = &p->fr[i];
        fprintf(stderr, "depth %d h=%d:", f->g, heur_state(p, &f->s));
        for (int r = 0; r < p->R; r++) {
            int id = f->s.id[r];
            if (!id) continue;
            fprintf(stderr, " [");
            for (int k = 0; k < vlen(p, id); k++)
                fprintf(stderr, "%s(%d,%d):%lld", k ? " " : "", pos_x(vpos(p, id)[k]), pos_y(vpos(p, id)[k]),
                        (long long)vcoef(p, id)[k]);
            fprintf(stderr, "]%s", f->s.fresh >> r & 1 ? "*" : "");
        }
        fprintf(stderr, "\n");
    }
}

int ex_bound(void *h) { return ((P *)h)->bound; }
long ex_nodes(void *h) { return ((P *)h)->nodes; }
int ex_values(void *h) { return ((P *)h)->st.nv; }

/* counters for the benchmark: [nodes, results generated, children kept, values interned] */
void ex_stats(void *h, long *out) {
    P *p = h;
    out[0] = p->nodes;
    out[1] = p->generated;
    out[2] = p->pushed;
    out[3] = p->st.nv;
}

void ex_set_gc(void *h, int values) { ((P *)h)->gc_values = values; }
void ex_set_split(void *h, int k, int n, int depth) {
    ((P *)h)->split_k = k;
    ((P *)h)->split_n = n;
    ((P *)h)->split_depth = depth;
}
int ex_root_children(void *h) { P *p = h; return p->depth ? (int)p->fr[0].nch : -1; }
long ex_gcs(void *h) { return ((P *)h)->gcs; }

void ex_hist(void *h, long *out) { memcpy(out, ((P *)h)->hist, sizeof(((P *)h)->hist)); }

/* the program found: 6 ints per instruction (family, offset, r0..r3) */
int ex_program(void *h, int *out, int cap) {
    P *p = h;
    int n = p->plen;
    for (int i = 0; i < n && 6 * i + 5 < cap; i++) {
        out[6 * i] = p->path[i].fam;
        out[6 * i + 1] = p->path[i].off;
        for (int k = 0; k < 4; k++) out[6 * i + 2 + k] = p->path[i].r[k];
    }
    return n;
}

void ex_free(void *h) {
    P *p = h;
    if (!p) return;
    store_t *S = &p->st;
    free(S->tpos); free(S->tcoef); free(S->off); free(S->hash); free(S->phi); free(S->vf); free(S->sym); free(S->table);
    for (int i = 0; i < 4; i++) {
        free(p->bpos[i]);
        free(p->bcoef[i]);
    }
    for (int j = 0; j < p->ncls; j++) {
        free(p->cls[j].pos);
        free(p->cls[j].c);
    }
    free(p->shtab); free(p->f2); free(p->f3); free(p->fr); free(p->ch); free(p->tt);
    free(p);
}
