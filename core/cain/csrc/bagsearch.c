/* The cain engine's compiled search over Goal-Bags.
 *
 * Our own design, after the algorithm of Stow et al., "Cain: Automatic Code Generation for
 * Simultaneous Convolutional Kernels on Focal-plane Sensor-processors": a node is a Goal-Bag (the
 * values some registers must hold at once), a reverse step replaces one Goal U of the bag by the
 * Lowers L with U = inst(L) (eq. 6-7), a plan is a path to the bag of the input alone, and the
 * children of a node are ordered by a local cost (eq. 11-14). What is ours: the pairs (which Lowers
 * are tried for a Goal, derived from the algebra of Goals: sub- and super-Goals of the bag shifted,
 * shared parts, translational self-similarity with two or three copies, antisymmetry, sign and
 * signed-digit splits, scaled copies of other Goals, every split of small Goals), the traversals
 * besides the paper's CGDS (anytime beam search with restarts, weighted best-first), the memory
 * discipline (a parent keeps a few children and makes its list again) and the pruning with a
 * proven lower bound (core/cain/lower_bound.py states and proves the terms used here).
 *
 * Python drives it through ctypes (core/cain/csearch.py): bs_new, bs_run in slices, bs_plan to read
 * a plan found, bs_set_best to share a length, bs_free. Deterministic: the same problem, settings and
 * node budget give the same plans (no clock decides anything but when a slice returns).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#ifdef BS_DEBUG
#include <stdio.h>
#endif

#define MAXR 26                 /* registers: Goals in a bag */
#define XOFF 16                 /* positions: x, y in -16..15, channel z in 0..63 */
#define POSN (1 << 16)
#define MAXA 1024               /* positions in one Goal */

#define PX(p) ((int)((p) & 31) - XOFF)
#define PY(p) ((int)(((p) >> 5) & 31) - XOFF)
#define PZ(p) ((int)((p) >> 10))
#define MKPOS(x, y, z) ((uint16_t)(((z) << 10) | (((y) + XOFF) << 5) | ((x) + XOFF)))

enum { OP_MOV, OP_MOVX, OP_MOV2X, OP_ADD, OP_ADDX, OP_ADD2X, OP_SUB, OP_SUBX, OP_SUB2X, OP_NEG, OP_DIV };
enum { F_MOV = 1, F_MOVX = 2, F_MOV2X = 4, F_ADD = 8, F_ADD3 = 16, F_ADDX = 32, F_ADD2X = 64, F_SUB = 128,
       F_SUBX = 256, F_SUB2X = 512, F_NEG = 1024, F_DIVQ = 2048, F_DIV3 = 4096, F_DIV4 = 8192, F_DIVA = 16384,
       F_POW2 = 32768 };
enum { T_CGDS, T_DFS, T_BEST, T_RANDOM, T_BEAM };

/* the twelve translations a macro can apply: four one-step, eight two-step (mov2x's rule holds) */
static const int SH_DX[12] = {0, 1, 0, -1, 0, 1, 2, 1, 0, -1, -2, -1};
static const int SH_DY[12] = {1, 0, -1, 0, 2, 1, 0, -1, -2, -1, 0, 1};
static const int SH_D0[12] = {0, 1, 2, 3, 0, 0, 1, 1, 2, 2, 3, 3};   /* north, east, south, west */
static const int SH_D1[12] = {-1, -1, -1, -1, 0, 1, 1, 2, 2, 3, 3, 0};

typedef struct { uint16_t pos; int16_t c; } Atom;

typedef struct {
    uint64_t hash, thash, bclass;   /* content; up to translation; up to sign, translation and 2^k */
    uint32_t off;                   /* first Atom in the pool */
    uint16_t n;                     /* positions */
    int8_t x0, x1, y0, y1;          /* the box of the Atoms' positions */
    int32_t size, dist, pow2, minm, maxm, weight;
} Goal;

typedef struct { uint8_t op, nd, d0, d1, nl, pad[3]; uint32_t up, lo[3]; } Step;

typedef struct Node {
    struct Node *parent, *prev, *next;    /* the tree; every live node in one list */
    Step step;                            /* parent -> this, in reverse */
    Step *chunk;                          /* children kept while waiting (cgds) */
    float *chunk_cost;
    int32_t total, cursor, chunk_start, chunk_n;
    uint32_t refs;
    uint16_t depth;
    uint8_t n, in_queue;
    uint64_t hash;
    uint32_t bag[];
} Node;

typedef struct {
    Step step;
    double cost;
    uint64_t hash;
    int32_t idx;
    uint8_t cn;
    uint32_t child[MAXR];
} Cand;

typedef struct { Step step; double cost; int32_t parent, idx; } Ranked;   /* a beam candidate */

#define TEMP_BASE 0x80000000u

typedef struct {
    /* problem */
    int d, regs, flags, max_coef, max_radius, nfinal, nchan;
    uint32_t root[MAXR];
    uint32_t initial[64];
    /* member settings */
    int traversal, scaled, focus, exhaustive, chunk, triples, scaled_share, three_copies;
    double jitter;
    uint64_t salt;
    size_t mem_limit;
    /* pools */
    Atom *atoms; size_t natoms, cap_atoms;
    Goal *goals; uint32_t ngoals, cap_goals;
    uint32_t *itab; size_t icap;             /* interned Goals: id + 1 */
    /* temporaries of one generation */
    Atom *tatoms; size_t ntatoms, cap_tatoms;
    Goal *tgoals; uint32_t ntgoals, cap_tgoals;
    uint32_t *ttab; size_t tcap;
    Cand *cands; int ncands; size_t cap_cands;
    uint64_t *cset; size_t ccap, ccount;             /* child bag hashes of one generation */
    int16_t *gmap;                           /* position -> coefficient of the Goal being split */
    /* search state */
    uint64_t *vkeys; uint16_t *vdepth; size_t vcap, vcount;   /* visited bags: best depth */
    Node **dq; size_t dq_head, dq_len, dq_cap;                /* deque (ring) */
    Node **heap; size_t heap_len, heap_cap; float *heap_key;  /* best-first */
    Node *live; size_t live_nodes, live_bytes;
    long long nodes;
    int best, exhausted;
    /* beam */
    int beam_width, beam_depth, beam_round, beam_bi;
    Ranked *pool; size_t np, cap_pool;
    Node **beam, **next_beam; int beam_n, next_n, beam_cap;
    /* plans found, serialised, not yet read */
    int32_t *plans; size_t nplans_int, cap_plans; int nplans;
    long long plan_nodes[64];
    int trims, restarts, keep_temps;
    int *shift_table;                        /* fewest shifts for a growth of the box (lower bound) */
} S;

/* ------------------------------------------------------------------ hashing */
static inline uint64_t mix(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return x;
}

static uint64_t atoms_hash(const Atom *a, int n, int rel) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    int base = (rel && n) ? a[0].pos : 0;
    for (int i = 0; i < n; i++)
        h = mix(h ^ ((uint64_t)(uint16_t)(a[i].pos - base) << 16 | (uint16_t)a[i].c)) + 0x632be59bd9b4e019ULL;
    return h;
}

/* ------------------------------------------------------------------ Goal arithmetic on Atom arrays */
static int naf_weight(int v) {
    int w = 0;
    v = v < 0 ? -v : v;
    while (v) {
        if (v & 1) { w++; v -= 2 - (v & 3); }
        v >>= 1;
    }
    return w;
}

static int shift_atoms(const Atom *a, int n, int dx, int dy, Atom *out) {
    for (int i = 0; i < n; i++) {
        int x = PX(a[i].pos) + dx, y = PY(a[i].pos) + dy;
        if (x < -XOFF || x >= XOFF || y < -XOFF || y >= XOFF) return -1;
        out[i].pos = MKPOS(x, y, PZ(a[i].pos));
        out[i].c = a[i].c;
    }
    return n;
}

static int add_atoms(const Atom *a, int na, const Atom *b, int nb, int sb, Atom *out) {
    int i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        if (j >= nb || (i < na && a[i].pos < b[j].pos)) out[k++] = a[i++];
        else if (i >= na || b[j].pos < a[i].pos) { out[k].pos = b[j].pos; out[k++].c = (int16_t)(sb * b[j].c); j++; }
        else {
            int c = a[i].c + sb * b[j].c;
            if (c) { out[k].pos = a[i].pos; out[k++].c = (int16_t)c; }
            i++; j++;
        }
    }
    return k;
}

static int neg_atoms(const Atom *a, int n, Atom *out) {
    for (int i = 0; i < n; i++) { out[i].pos = a[i].pos; out[i].c = (int16_t)-a[i].c; }
    return n;
}

static int scale_atoms(const Atom *a, int n, int f, Atom *out) {
    for (int i = 0; i < n; i++) { out[i].pos = a[i].pos; out[i].c = (int16_t)(a[i].c * f); }
    return n;
}

/* a is a sub-multiset of b: the same sign and no more Atoms at every position */
static int is_sub_atoms(const Atom *a, int na, const Atom *b, int nb) {
    int j = 0;
    for (int i = 0; i < na; i++) {
        while (j < nb && b[j].pos < a[i].pos) j++;
        if (j >= nb || b[j].pos != a[i].pos) return 0;
        int ca = a[i].c, cb = b[j].c;
        if (ca > 0 ? cb < ca : cb > ca) return 0;
        j++;
    }
    return 1;
}

static int cmp_atoms(const Atom *a, int na, const Atom *b, int nb) {
    for (int i = 0; i < na && i < nb; i++) {
        if (a[i].pos != b[i].pos) return a[i].pos < b[i].pos ? -1 : 1;
        if (a[i].c != b[i].c) return a[i].c < b[i].c ? -1 : 1;
    }
    return na < nb ? -1 : na > nb;
}

static void goal_stats(Goal *g, const Atom *a) {
    int n = g->n, acc = 0, minm = 1 << 30, maxm = 0;
    g->size = g->dist = g->weight = 0;
    for (int i = 0; i < n; i++) {
        int c = a[i].c, m = c < 0 ? -c : c, x = PX(a[i].pos), y = PY(a[i].pos), z = PZ(a[i].pos);
        g->size += m;
        g->dist += m * ((x < 0 ? -x : x) + (y < 0 ? -y : y) + z + (c < 0));
        g->weight += naf_weight(m);
        acc |= m;
        if (m < minm) minm = m;
        if (m > maxm) maxm = m;
        if (!i || x < g->x0) g->x0 = (int8_t)x;
        if (!i || x > g->x1) g->x1 = (int8_t)x;
        if (!i || y < g->y0) g->y0 = (int8_t)y;
        if (!i || y > g->y1) g->y1 = (int8_t)y;
    }
    g->pow2 = acc ? (acc & -acc) : 1;
    g->minm = n ? minm : 0; g->maxm = maxm;
    g->hash = atoms_hash(a, n, 0);
    g->thash = atoms_hash(a, n, 1);
    /* class up to sign, translation and powers of two: divide out pow2, first coefficient positive */
    uint64_t h = 0x51ed270b27c2a6a5ULL ^ (uint64_t)n;
    int sgn = (n && a[0].c < 0) ? -1 : 1;
    for (int i = 0; i < n; i++)
        h = mix(h ^ ((uint64_t)(uint16_t)(a[i].pos - a[0].pos) << 16 | (uint16_t)(sgn * a[i].c / g->pow2)))
            + 0x632be59bd9b4e019ULL;
    g->bclass = h;
}

/* ------------------------------------------------------------------ the Goal pool */
static void *grow(void *p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(p, c * elem);
    if (!q) abort();
    *cap = c;
    return q;
}

static inline const Goal *G_(const S *s, uint32_t id) {
    return id >= TEMP_BASE ? &s->tgoals[id - TEMP_BASE] : &s->goals[id];
}
static inline const Atom *A_(const S *s, uint32_t id) {
    return id >= TEMP_BASE ? &s->tatoms[s->tgoals[id - TEMP_BASE].off] : &s->atoms[s->goals[id].off];
}

static int64_t itab_find(const S *s, const Atom *a, int n, uint64_t h) {
    size_t mask = s->icap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t e = s->itab[i];
        if (!e) return -1;
        const Goal *g = &s->goals[e - 1];
        if (g->hash == h && g->n == n && !memcmp(&s->atoms[g->off], a, n * sizeof(Atom))) return e - 1;
    }
}

static void itab_put(S *s, uint32_t id) {
    size_t mask = s->icap - 1;
    for (size_t i = s->goals[id].hash & mask;; i = (i + 1) & mask)
        if (!s->itab[i]) { s->itab[i] = id + 1; return; }
}

static void itab_rebuild(S *s, size_t cap) {
    free(s->itab);
    s->icap = cap;
    s->itab = calloc(cap, sizeof(uint32_t));
    if (!s->itab) abort();
    for (uint32_t i = 0; i < s->ngoals; i++) itab_put(s, i);
}

static uint32_t intern(S *s, const Atom *a, int n) {
    uint64_t h = atoms_hash(a, n, 0);
    int64_t f = itab_find(s, a, n, h);
    if (f >= 0) return (uint32_t)f;
    size_t cg = s->cap_goals;
    s->goals = grow(s->goals, &cg, s->ngoals + 1, sizeof(Goal));
    s->cap_goals = (uint32_t)cg;
    s->atoms = grow(s->atoms, &s->cap_atoms, s->natoms + n, sizeof(Atom));
    Goal *g = &s->goals[s->ngoals];
    g->off = (uint32_t)s->natoms; g->n = (uint16_t)n;
    memcpy(&s->atoms[s->natoms], a, n * sizeof(Atom));
    s->natoms += n;
    goal_stats(g, a);
    uint32_t id = s->ngoals++;
    if (2 * (size_t)s->ngoals > s->icap) itab_rebuild(s, s->icap * 2);
    else itab_put(s, id);
    return id;
}

/* a Goal of this generation: interned if known, else a temporary (made permanent if a child is kept) */
static uint32_t temp_goal(S *s, const Atom *a, int n) {
    uint64_t h = atoms_hash(a, n, 0);
    int64_t f = itab_find(s, a, n, h);
    if (f >= 0) return (uint32_t)f;
    size_t mask = s->tcap - 1;
    size_t i;
    for (i = h & mask; s->ttab[i]; i = (i + 1) & mask) {
        const Goal *g = &s->tgoals[s->ttab[i] - 1];
        if (g->hash == h && g->n == n && !memcmp(&s->tatoms[g->off], a, n * sizeof(Atom)))
            return TEMP_BASE + s->ttab[i] - 1;
    }
    size_t cg = s->cap_tgoals;
    s->tgoals = grow(s->tgoals, &cg, s->ntgoals + 1, sizeof(Goal));
    s->cap_tgoals = (uint32_t)cg;
    s->tatoms = grow(s->tatoms, &s->cap_tatoms, s->ntatoms + n, sizeof(Atom));
    Goal *g = &s->tgoals[s->ntgoals];
    g->off = (uint32_t)s->ntatoms; g->n = (uint16_t)n;
    memcpy(&s->tatoms[s->ntatoms], a, n * sizeof(Atom));
    s->ntatoms += n;
    goal_stats(g, a);
    s->ttab[i] = ++s->ntgoals;
    if (2 * (size_t)s->ntgoals > s->tcap) {        /* grow the temporary table */
        free(s->ttab);
        s->tcap *= 2;
        s->ttab = calloc(s->tcap, sizeof(uint32_t));
        for (uint32_t k = 0; k < s->ntgoals; k++) {
            size_t m = s->tcap - 1, j;
            for (j = s->tgoals[k].hash & m; s->ttab[j]; j = (j + 1) & m) ;
            s->ttab[j] = k + 1;
        }
    }
    return TEMP_BASE + s->ntgoals - 1;
}

static void temps_reset(S *s) {
    s->ntgoals = 0; s->ntatoms = 0;
    memset(s->ttab, 0, s->tcap * sizeof(uint32_t));
}

static uint32_t make_permanent(S *s, uint32_t id) {
    if (id < TEMP_BASE) return id;
    const Goal *g = &s->tgoals[id - TEMP_BASE];
    return intern(s, &s->tatoms[g->off], g->n);
}

/* ------------------------------------------------------------------ bags */
static uint64_t bag_hash(const S *s, const uint32_t *bag, int n) {
    uint64_t h = 0x2545f4914f6cdd1dULL;
    for (int i = 0; i < n; i++) h += mix(G_(s, bag[i])->hash + 0x9e3779b97f4a7c15ULL);
    return h;
}

/* a bag's Goals in a canonical order: by content hash (then id), so the order does not depend on when a
 * Goal was interned (compaction renumbers them) */
static void sort_bag(const S *s, uint32_t *a, int n) {
    for (int i = 1; i < n; i++) {
        uint32_t v = a[i];
        uint64_t hv = G_(s, v)->hash;
        int j = i - 1;
        while (j >= 0 && (G_(s, a[j])->hash > hv || (G_(s, a[j])->hash == hv && a[j] > v))) { a[j + 1] = a[j]; j--; }
        a[j + 1] = v;
    }
}

static int is_initial_id(const S *s, uint32_t id) {
    for (int z = 0; z < s->nchan; z++) if (s->initial[z] == id) return 1;
    return 0;
}

static int bag_is_initial(const S *s, const uint32_t *bag, int n) {
    for (int i = 0; i < n; i++) {
        if (!is_initial_id(s, bag[i])) return 0;
        if (i && bag[i] == bag[i - 1]) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ the proven lower bound
 * The bound of core/cain/lower_bound.py, term for term (the proofs are in docs/cain.md): one
 * instruction per Goal that needs a write of its own; halvings from the smallest power of two; adds
 * from the signed-digit weights of the classes of Goals (up to sign, translation and 2^k), three-
 * and two-operand adds reaching the heaviest weight; the shifts the Goals' box needs, which only
 * shifting two-operand adds can share with the adds; and the registers' weight potential. */
#define SHIFT_CAP 12
#define SHIFT_C (SHIFT_CAP + 1)

static void shift_table_init(S *s) {
    int offs[12][2], no = 0;
    if (s->flags & (F_MOVX | F_ADDX | F_SUBX))
        for (int t = 0; t < 4; t++) { offs[no][0] = SH_DX[t]; offs[no++][1] = SH_DY[t]; }
    if (s->flags & (F_MOV2X | F_ADD2X | F_SUB2X))
        for (int t = 4; t < 12; t++) { offs[no][0] = SH_DX[t]; offs[no++][1] = SH_DY[t]; }
    int n = SHIFT_C * SHIFT_C * SHIFT_C * SHIFT_C;
    s->shift_table = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) s->shift_table[i] = 1000000;
    s->shift_table[0] = 0;
    for (int total = 1; total <= 4 * SHIFT_CAP; total++)
        for (int e = 0; e < SHIFT_C; e++) for (int w = 0; w < SHIFT_C; w++) for (int nn = 0; nn < SHIFT_C; nn++) {
            int so = total - e - w - nn;
            if (so < 0 || so >= SHIFT_C) continue;
            int best = 1000000;
            for (int k = 0; k < no; k++) {
                int dx = offs[k][0], dy = offs[k][1];
                int e2 = e - (dx > 0 ? dx : 0), w2 = w - (dx < 0 ? -dx : 0);
                int n2 = nn - (dy > 0 ? dy : 0), s2 = so - (dy < 0 ? -dy : 0);
                if (e2 < 0) e2 = 0;
                if (w2 < 0) w2 = 0;
                if (n2 < 0) n2 = 0;
                if (s2 < 0) s2 = 0;
                if (e2 + w2 + n2 + s2 < total) {
                    int v = 1 + s->shift_table[((e2 * SHIFT_C + w2) * SHIFT_C + n2) * SHIFT_C + s2];
                    if (v < best) best = v;
                }
            }
            s->shift_table[((e * SHIFT_C + w) * SHIFT_C + nn) * SHIFT_C + so] = best;
        }
}

static int clamp_cap(int v) { return v < 0 ? 0 : (v > SHIFT_CAP ? SHIFT_CAP : v); }

static int lower_bound(const S *s, const uint32_t *bag, int n) {
    int outputs = 0, minpow = 1 << s->d;
    int x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    long top = 0, total = 0;
    uint64_t used_init = 0;
    int ws[MAXR]; uint64_t cls[MAXR]; int nc = 0;
    for (int i = 0; i < n; i++) {
        uint32_t id = bag[i];
        const Goal *g = G_(s, id);
        total += g->weight;
        if (is_initial_id(s, id)) {
            int z = 0;
            while (s->initial[z] != id) z++;
            if (!(used_init & (1ULL << z))) { used_init |= 1ULL << z; continue; }
        }
        outputs++;
        if (g->pow2 < minpow) minpow = g->pow2;
        if (g->x0 < x0) x0 = g->x0;
        if (g->x1 > x1) x1 = g->x1;
        if (g->y0 < y0) y0 = g->y0;
        if (g->y1 > y1) y1 = g->y1;
        if (g->weight > top) top = g->weight;
        if (g->weight > 1) {
            int k;
            for (k = 0; k < nc && cls[k] != g->bclass; k++) ;
            if (k == nc) { cls[nc] = g->bclass; ws[nc++] = g->weight; }
        }
    }
    if (!outputs) return 0;
    int lg = 0;
    while ((1 << (lg + 1)) <= minpow) lg++;
    int halvings = s->d - lg;
    if (halvings < 0) halvings = 0;
    for (int i = 1; i < nc; i++) {       /* weights descending */
        int v = ws[i], j = i - 1;
        while (j >= 0 && ws[j] < v) { ws[j + 1] = ws[j]; j--; }
        ws[j + 1] = v;
    }
    int three = (s->flags & F_ADD3) != 0, k = three ? 3 : 2, class_adds = 0;
    for (int i = 0; i < nc; i++) {
        int t = 0; long reach = 1;
        while (reach < ws[i]) { reach *= k; t++; }
        if (t + i > class_adds) class_adds = t + i;
    }
    int shifting_adds = (s->flags & (F_ADDX | F_ADD2X | F_SUBX | F_SUB2X)) != 0;
    int shifts = 0;
    if (x0 || x1 || y0 || y1) {
        shifts = s->shift_table[((clamp_cap(x1) * SHIFT_C + clamp_cap(-x0)) * SHIFT_C + clamp_cap(y1)) * SHIFT_C
                                + clamp_cap(-y0)];
        if (shifts >= 1000000) shifts = shifting_adds ? 0 : 1;
    }
    /* a4 three-operand adds and b others reach weight 3^a4 2^b; only shifting b's stand for shifts */
    int best = 1 << 30;
    long reach = 1;
    for (int a4 = 0; a4 <= (three ? 40 : 0); a4++) {
        int b = 0; long r = reach;
        while (r < top) { r *= 2; b++; }
        if (b < class_adds - a4) b = class_adds - a4;
        int moves = shifts - (shifting_adds ? b : 0);
        if (moves < 0) moves = 0;
        if (a4 + b + moves < best) best = a4 + b + moves;
        if (reach < top) reach *= 3;
        else if (a4 >= class_adds) break;
    }
    /* the registers' weight potential: a new value weighs at most their sum, or twice the largest
     * (x shifted minus x) */
    long W = s->nchan, M = 1;
    int pot = 0, self_sub = (s->flags & (F_SUBX | F_SUB2X)) != 0;
    while ((M < top || W < total) && pot < 1000) {
        long nv = self_sub ? (W > 2 * M ? W : 2 * M) : W;
        if (nv > M) M = nv;
        W += nv;
        pot++;
    }
    int copying = (s->flags & (F_DIV4 | F_DIVQ)) != 0;
    int v = halvings + best;
    int pv = copying ? pot : halvings + pot;
    if (pv > v) v = pv;
    return outputs > v ? outputs : v;
}

/* ------------------------------------------------------------------ the local cost (eq. 11-14)
 * dists: every Atom counts 1 plus its distance from the centre (+1 if negative), the distance shared
 * among the Goals of the bag holding it as a sub-Goal; reps: |G|^2 once per class of Goals equal up to
 * translation (single positions free); divs: 2^d over the fewest Atoms at a position, plus the most
 * over 2^d. With `scaled` a Goal's Atoms count divided by the power of two common to them (a scaled
 * copy of a simple Goal is simple). */
static double bag_cost(const S *s, const uint32_t *bag, int n) {
    double total = 0;
    uint64_t cls[MAXR]; int nc = 0;
    int minm = 1 << 30, maxm = 0;
    for (int i = 0; i < n; i++) {
        const Goal *g = G_(s, bag[i]);
        int holders = 1;
        for (int j = 0; j < n; j++) {
            if (j && bag[j] == bag[j - 1]) continue;
            const Goal *b = G_(s, bag[j]);
            if (b->size > g->size && b->n >= g->n && is_sub_atoms(A_(s, bag[i]), g->n, A_(s, bag[j]), b->n))
                holders++;
        }
        double f = s->scaled ? g->pow2 : 1;
        total += (g->size + (double)g->dist / holders) / f;
        int k;
        for (k = 0; k < nc && cls[k] != g->thash; k++) ;
        if (k == nc) {
            cls[nc++] = g->thash;
            if (g->n > 1) total += (g->size / f) * (g->size / f);
        }
        if (g->minm < minm) minm = g->minm;
        if (g->maxm > maxm) maxm = g->maxm;
    }
    return total + (double)(1 << s->d) / minm + (double)maxm / (1 << s->d);
}

/* ------------------------------------------------------------------ candidates (reverse steps) */
static int extra_registers(const S *s, int op, const uint32_t *lo, int nl, const uint32_t *rest, int nr) {
    int dead[3] = {0, 0, 0}, used[MAXR] = {0};
    int any_dead = 0;
    for (int i = 0; i < nl; i++) {
        int k;
        for (k = 0; k < nr; k++) if (!used[k] && rest[k] == lo[i]) break;
        if (k < nr) used[k] = 1; else { dead[i] = 1; any_dead = 1; }
    }
    if (op == OP_DIV) {
        int best = 99;
        if (s->flags & F_DIVQ) best = 1;
        if (any_dead && (s->flags & (F_DIVA | F_DIV3)) && 2 < best) best = 2;
        if ((s->flags & F_DIV4) && 3 < best) best = 3;
        return best == 99 ? -1 : best;
    }
    switch (op) {
    case OP_MOV: case OP_MOVX: case OP_MOV2X: case OP_SUB: case OP_SUBX: case OP_SUB2X:
        return dead[0] ? 0 : 1;
    case OP_ADD: case OP_ADDX: case OP_ADD2X:
        for (int i = 0; i < nl; i++) if (dead[i]) return 0;
        return 1;
    default:
        return 1;
    }
}

static int lower_ok(const S *s, const Atom *a, int n) {
    if (n <= 0) return 0;
    for (int i = 0; i < n; i++) {
        int c = a[i].c < 0 ? -a[i].c : a[i].c, x = PX(a[i].pos), y = PY(a[i].pos);
        if (c > s->max_coef) return 0;
        if (x > s->max_radius || -x > s->max_radius || y > s->max_radius || -y > s->max_radius) return 0;
    }
    return 1;
}

/* the bag being expanded */
typedef struct {
    const uint32_t *bag; int n;
    uint64_t hash;
} Ctx;

static void cset_clear(S *s) {
    memset(s->cset, 0, s->ccap * sizeof(uint64_t));
    s->ccount = 0;
}

static int cset_add(S *s, uint64_t h) {     /* 1 when new */
    if (!h) h = 1;
    if (2 * (s->ccount + 1) > s->ccap) {       /* grow, keeping what is there */
        uint64_t *old = s->cset;
        size_t oc = s->ccap;
        s->ccap *= 2;
        s->cset = calloc(s->ccap, sizeof(uint64_t));
        if (!s->cset) abort();
        for (size_t i = 0; i < oc; i++) if (old[i]) {
            size_t m = s->ccap - 1, j;
            for (j = old[i] & m; s->cset[j]; j = (j + 1) & m) ;
            s->cset[j] = old[i];
        }
        free(old);
    }
    size_t mask = s->ccap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        if (!s->cset[i]) { s->cset[i] = h; s->ccount++; return 1; }
        if (s->cset[i] == h) return 0;
    }
}

static void emit(S *s, const Ctx *cx, int op, uint32_t up, int nd, int d0, int d1, int nl,
                 const Atom *la, int na, const Atom *lb, int nb, const Atom *lc, int nc3) {
    const Atom *ls[3] = {la, lb, lc};
    int ns[3] = {na, nb, nc3};
    uint32_t lo[3];
    for (int i = 0; i < nl; i++) {
        if (!lower_ok(s, ls[i], ns[i])) return;
        lo[i] = temp_goal(s, ls[i], ns[i]);
    }
    /* child = (F \ U) U L, multiset union by maximum multiplicity */
    uint32_t child[MAXR + 3];
    int cn = 0, removed = 0;
    for (int i = 0; i < cx->n; i++) {
        if (!removed && cx->bag[i] == up) { removed = 1; continue; }
        child[cn++] = cx->bag[i];
    }
    int nr = cn;
    int same = (op == OP_SUB || op == OP_SUBX || op == OP_SUB2X) && nl == 2 && lo[0] == lo[1];
    int nneed = same ? 1 : nl;
    for (int i = 0; i < nneed; i++) {
        int want = 0, have = 0;
        for (int j = 0; j < nneed; j++) if (lo[j] == lo[i]) want++;
        for (int j = 0; j < cn; j++) if (child[j] == lo[i]) have++;
        if (have < want) {
            if (cn >= MAXR) return;
            child[cn++] = lo[i];
        }
    }
    if (cn > s->regs) return;
    int extra = same ? 1 : extra_registers(s, op, lo, nl, child, nr);
    if (extra < 0 || cn + extra > s->regs) return;
    sort_bag(s, child, cn);
    uint64_t h = bag_hash(s, child, cn);
    if (h == cx->hash || !cset_add(s, h)) return;
    s->cands = grow(s->cands, &s->cap_cands, (size_t)s->ncands + 1, sizeof(Cand));
    Cand *c = &s->cands[s->ncands];
    c->step.op = (uint8_t)op; c->step.nd = (uint8_t)nd; c->step.d0 = (uint8_t)d0; c->step.d1 = (uint8_t)d1;
    c->step.nl = (uint8_t)nl; c->step.up = up;
    for (int i = 0; i < 3; i++) c->step.lo[i] = i < nl ? lo[i] : 0;
    c->cn = (uint8_t)cn;
    memcpy(c->child, child, cn * sizeof(uint32_t));
    c->hash = h;
    c->idx = s->ncands;
    if (bag_is_initial(s, child, cn)) c->cost = -1e300;
    else {
        c->cost = bag_cost(s, child, cn);
        if (op == OP_MOV) c->cost *= 2.0;
        if (s->jitter > 0) {
            double u = (double)(mix(h ^ s->salt) >> 11) / 9007199254740992.0;
            c->cost *= 1.0 + s->jitter * (2.0 * u - 1.0);
        }
    }
    s->ncands++;
}

#define EMIT1(op, up, nd, d0, d1, a, na) emit(s, cx, op, up, nd, d0, d1, 1, a, na, NULL, 0, NULL, 0)
#define EMIT2(op, up, nd, d0, d1, a, na, b, nb) emit(s, cx, op, up, nd, d0, d1, 2, a, na, b, nb, NULL, 0)
#define EMIT3(up, a, na, b, nb, c, nc) emit(s, cx, OP_ADD, up, 0, 0, 0, 3, a, na, b, nb, c, nc)

static int shift_allowed(const S *s, int t, int fl1, int fl2) { return (s->flags & (t < 4 ? fl1 : fl2)) != 0; }
static int op_for(int t, int one, int two) { return t < 4 ? one : two; }

/* greedy pairing along (dx, dy): G = S + S.t + R (same signs) or G = S.t - S + R (`opposite`); S takes the
 * sign of the Atom at p + t, positions taken in the order that lets chains pair up ([1 2 1] = [1 1] + [1 1].t) */
static int pos_match_split(const S *s, const Atom *g, int ng, int dx, int dy, int opposite,
                           Atom *sa, int *ns, Atom *ra, int *nr) {
    int16_t *m = s->gmap;
    for (int i = 0; i < ng; i++) m[g[i].pos] = g[i].c;
    int k = dx + (dy << 5);
    Atom tmp[MAXA];
    int nt = 0;
    for (int ii = 0; ii < ng; ii++) {
        int i = k > 0 ? ii : ng - 1 - ii;
        int p = g[i].pos, x = PX(p) + dx, y = PY(p) + dy;
        if (x < -XOFF || x >= XOFF || y < -XOFF || y >= XOFF) continue;
        int q = MKPOS(x, y, PZ(p));
        int a = m[p], b = m[q];
        if (a && b && (((a > 0) != (b > 0)) == opposite)) {
            int ma = a < 0 ? -a : a, mb = b < 0 ? -b : b, mm = ma < mb ? ma : mb;
            int sv = b > 0 ? mm : -mm;
            tmp[nt].pos = (uint16_t)p; tmp[nt++].c = (int16_t)sv;
            m[p] = (int16_t)(a - (opposite ? -1 : 1) * sv);
            m[q] = (int16_t)(b - sv);
        }
    }
    for (int i = 1; i < nt; i++) {
        Atom v = tmp[i]; int j = i - 1;
        while (j >= 0 && tmp[j].pos > v.pos) { tmp[j + 1] = tmp[j]; j--; }
        tmp[j + 1] = v;
    }
    int w = 0;
    for (int i = 0; i < nt; i++) {
        if (w && sa[w - 1].pos == tmp[i].pos) sa[w - 1].c = (int16_t)(sa[w - 1].c + tmp[i].c);
        else sa[w++] = tmp[i];
    }
    *ns = w;
    int r = 0;
    for (int i = 0; i < ng; i++) if (m[g[i].pos]) { ra[r].pos = g[i].pos; ra[r++].c = m[g[i].pos]; }
    *nr = r;
    for (int i = 0; i < ng; i++) m[g[i].pos] = 0;
    return nt;
}

/* greedy triples along (dx, dy): G = S + S.t + S.2t + R, Atoms of one sign at p, p + t and p + 2t */
static int triple_match(const S *s, const Atom *g, int ng, int dx, int dy, Atom *sa, int *ns, Atom *ra, int *nr) {
    int16_t *m = s->gmap;
    for (int i = 0; i < ng; i++) m[g[i].pos] = g[i].c;
    int k = dx + (dy << 5), nt = 0;
    for (int ii = 0; ii < ng; ii++) {
        int i = k > 0 ? ii : ng - 1 - ii;
        int p = g[i].pos, x1 = PX(p) + dx, y1 = PY(p) + dy, x2 = x1 + dx, y2 = y1 + dy;
        if (x2 < -XOFF || x2 >= XOFF || y2 < -XOFF || y2 >= XOFF || x1 < -XOFF || x1 >= XOFF || y1 < -XOFF || y1 >= XOFF)
            continue;
        int q1 = MKPOS(x1, y1, PZ(p)), q2 = MKPOS(x2, y2, PZ(p));
        int a = m[p], b = m[q1], c = m[q2];
        if (!a || !b || !c || (a > 0) != (b > 0) || (a > 0) != (c > 0)) continue;
        int ma = a < 0 ? -a : a, mb = b < 0 ? -b : b, mc = c < 0 ? -c : c;
        int mm = ma < mb ? ma : mb;
        if (mc < mm) mm = mc;
        int sv = a > 0 ? mm : -mm;
        m[p] = (int16_t)(a - sv); m[q1] = (int16_t)(b - sv); m[q2] = (int16_t)(c - sv);
        sa[nt].pos = (uint16_t)p; sa[nt++].c = (int16_t)sv;
    }
    for (int i = 1; i < nt; i++) {
        Atom v = sa[i]; int j = i - 1;
        while (j >= 0 && sa[j].pos > v.pos) { sa[j + 1] = sa[j]; j--; }
        sa[j + 1] = v;
    }
    *ns = nt;
    int r = 0;
    for (int i = 0; i < ng; i++) if (m[g[i].pos]) { ra[r].pos = g[i].pos; ra[r++].c = m[g[i].pos]; }
    *nr = r;
    for (int i = 0; i < ng; i++) m[g[i].pos] = 0;
    return nt;
}

static int dist_of(const Atom *a, int n) {
    int d = 0;
    for (int i = 0; i < n; i++) {
        int c = a[i].c, m = c < 0 ? -c : c, x = PX(a[i].pos), y = PY(a[i].pos);
        d += m * ((x < 0 ? -x : x) + (y < 0 ? -y : y) + PZ(a[i].pos) + (c < 0));
    }
    return d;
}

static int size_of(const Atom *a, int n) {
    int t = 0;
    for (int i = 0; i < n; i++) t += a[i].c < 0 ? -a[i].c : a[i].c;
    return t;
}

/* every part of G (as counts per position) in mixed radix; `code` picks one */
static int part_of(const Atom *g, int ng, long code, Atom *out) {
    int k = 0;
    for (int i = 0; i < ng; i++) {
        int m = g[i].c < 0 ? -g[i].c : g[i].c;
        int take = (int)(code % (m + 1));
        code /= (m + 1);
        if (take) { out[k].pos = g[i].pos; out[k++].c = (int16_t)(g[i].c < 0 ? -take : take); }
    }
    return k;
}

static void gen_goal(S *s, const Ctx *cx, uint32_t gid, int count, int split_it, int exhaustive) {
    const Goal *G = G_(s, gid);
    int ng = G->n;
    Atom g[MAXA], a[MAXA], b[MAXA], c[MAXA], r[MAXA];
    memcpy(g, A_(s, gid), ng * sizeof(Atom));
    int gdist = G->dist, gsize = G->size;
    int fl = s->flags;
    int na, nb, nc, nr;

    /* a copy: G held twice */
    if (count > 1 && (fl & F_MOV)) EMIT1(OP_MOV, gid, 0, 0, 0, g, ng);
    /* translations: towards the centre, or onto a Goal of the bag */
    for (int t = 0; t < 12; t++) {
        if (!shift_allowed(s, t, F_MOVX, F_MOV2X)) continue;
        if ((na = shift_atoms(g, ng, -SH_DX[t], -SH_DY[t], a)) < 0) continue;
        int keep = dist_of(a, na) < gdist;
        if (!keep) {
            uint64_t h = atoms_hash(a, na, 0);
            int64_t f = itab_find(s, a, na, h);
            if (f >= 0) {
                for (int i = 0; i < cx->n && !keep; i++) keep = cx->bag[i] == (uint32_t)f;
                keep = keep || is_initial_id(s, (uint32_t)f);
            }
        }
        if (keep) EMIT1(op_for(t, OP_MOVX, OP_MOV2X), gid, t < 4 ? 1 : 2, SH_D0[t], SH_D1[t], a, na);
    }
    /* negation: towards the positive input, or onto a Goal of the bag */
    if (fl & F_NEG) {
        int negs = 0;
        for (int i = 0; i < ng; i++) negs += g[i].c < 0;
        na = neg_atoms(g, ng, a);
        int keep = 2 * negs >= ng;
        if (!keep) {
            int64_t f = itab_find(s, a, na, atoms_hash(a, na, 0));
            for (int i = 0; f >= 0 && i < cx->n && !keep; i++) keep = cx->bag[i] == (uint32_t)f;
        }
        if (keep) EMIT1(OP_NEG, gid, 0, 0, 0, a, na);
    }
    /* halving: Lower 2G */
    if ((fl & (F_DIVQ | F_DIV3 | F_DIV4 | F_DIVA)) && 2 * G->maxm <= (1 << s->d)) {
        na = scale_atoms(g, ng, 2, a);
        EMIT1(OP_DIV, gid, 0, 0, 0, a, na);
    }
    /* doubling: G = H + H */
    if ((fl & F_ADD) && G->pow2 % 2 == 0) {
        for (int i = 0; i < ng; i++) { a[i].pos = g[i].pos; a[i].c = (int16_t)(g[i].c / 2); }
        EMIT2(OP_ADD, gid, 0, 0, 0, a, ng, a, ng);
    }
    /* sub-Goals and super-Goals of the bag, shifted (common sub-expressions); scaled copies */
    uint32_t others[MAXR + 64]; int no = 0;
    for (int i = 0; i < cx->n; i++) if (!i || cx->bag[i] != cx->bag[i - 1]) others[no++] = cx->bag[i];
    for (int z = 0; z < s->nchan; z++) {
        int k;
        for (k = 0; k < no && others[k] != s->initial[z]; k++) ;
        if (k == no) others[no++] = s->initial[z];
    }
    for (int oi = 0; oi < no; oi++) {
        uint32_t hid = others[oi];
        if (hid == gid) continue;
        const Goal *H = G_(s, hid);
        const Atom *h = A_(s, hid);
        int sh = H->size;
        for (int t = -1; t < 12; t++) {
            int one = t < 4;
            if (t >= 0 && !shift_allowed(s, t, F_ADDX | F_SUBX, F_ADD2X | F_SUB2X)) continue;
            Atom hs[MAXA]; int nh;
            if (t < 0) { memcpy(hs, h, H->n * sizeof(Atom)); nh = H->n; }
            else if ((nh = shift_atoms(h, H->n, SH_DX[t], SH_DY[t], hs)) < 0) continue;
            if (sh < gsize && nh <= ng && is_sub_atoms(hs, nh, g, ng)) {
                nr = add_atoms(g, ng, hs, nh, -1, r);
                if (t < 0) {
                    if (fl & F_ADD) EMIT2(OP_ADD, gid, 0, 0, 0, h, H->n, r, nr);
                    if (s->triples && (fl & F_ADD3) && exhaustive && size_of(r, nr) > 1) {
                        long total = 1;
                        for (int i = 0; i < nr && total <= s->triples; i++)
                            total *= (r[i].c < 0 ? -r[i].c : r[i].c) + 1;
                        if (total <= s->triples) {
                            for (long code = 1; code < total - 1; code++) {
                                na = part_of(r, nr, code, a);
                                nb = add_atoms(r, nr, a, na, -1, b);
                                if (cmp_atoms(a, na, b, nb) > 0) continue;
                                EMIT3(gid, h, H->n, a, na, b, nb);
                            }
                        }
                    }
                } else if (fl & (one ? F_ADDX : F_ADD2X)) {
                    if ((nb = shift_atoms(r, nr, -SH_DX[t], -SH_DY[t], b)) >= 0)
                        EMIT2(op_for(t, OP_ADDX, OP_ADD2X), gid, one ? 1 : 2, SH_D0[t], SH_D1[t], h, H->n, b, nb);
                }
            } else if (sh > gsize && ng <= nh && is_sub_atoms(g, ng, hs, nh)) {
                nb = add_atoms(hs, nh, g, ng, -1, b);
                if (t < 0) { if (fl & F_SUB) EMIT2(OP_SUB, gid, 0, 0, 0, h, H->n, b, nb); }
                else if (fl & (one ? F_SUBX : F_SUB2X))
                    EMIT2(op_for(t, OP_SUBX, OP_SUB2X), gid, one ? 1 : 2, SH_D0[t], SH_D1[t], h, H->n, b, nb);
            }
            /* a scaled copy of H inside G: G = 2^k H.t + R (H is made from 2^k H by halvings) */
            if (s->scaled_share && t < 0 && !is_initial_id(s, hid) && sh * 2 <= gsize && (fl & F_ADD)) {
                for (int k2 = 2; sh * k2 < gsize && k2 <= 8; k2 *= 2) {
                    na = scale_atoms(h, H->n, k2, a);
                    /* every shift (position offset) of 2^k H that fits inside G */
                    for (int j = 0; j < ng; j++) {
                        int dx = PX(g[j].pos) - PX(a[0].pos), dy = PY(g[j].pos) - PY(a[0].pos);
                        if (PZ(g[j].pos) != PZ(a[0].pos)) continue;
                        if ((nb = shift_atoms(a, na, dx, dy, b)) < 0) continue;
                        if (!is_sub_atoms(b, nb, g, ng)) continue;
                        nr = add_atoms(g, ng, b, nb, -1, r);
                        EMIT2(OP_ADD, gid, 0, 0, 0, b, nb, r, nr);
                    }
                }
            }
        }
    }
    if (exhaustive && (ng > 1 || (g[0].c > 1 || g[0].c < -1))) {
        /* every split of a small Goal into two parts, joined by each macro that can join them */
        long total = 1;
        for (int i = 0; i < ng; i++) total *= (g[i].c < 0 ? -g[i].c : g[i].c) + 1;
        for (long code = 1; code < total - 1; code++) {
            na = part_of(g, ng, code, a);
            nb = add_atoms(g, ng, a, na, -1, b);
            int ordered = cmp_atoms(a, na, b, nb) <= 0;
            if ((fl & F_ADD) && ordered) EMIT2(OP_ADD, gid, 0, 0, 0, a, na, b, nb);
            if (fl & F_SUB) { nc = neg_atoms(b, nb, c); EMIT2(OP_SUB, gid, 0, 0, 0, a, na, c, nc); }
            int adist = dist_of(a, na);
            for (int t = 0; t < 12; t++) {
                int one = t < 4;
                if ((fl & (one ? F_SUBX : F_SUB2X))) {
                    Atom as[MAXA]; int nas = shift_atoms(a, na, -SH_DX[t], -SH_DY[t], as);
                    if (nas >= 0 && dist_of(as, nas) <= adist) {
                        nc = neg_atoms(b, nb, c);
                        EMIT2(op_for(t, OP_SUBX, OP_SUB2X), gid, one ? 1 : 2, SH_D0[t], SH_D1[t], as, nas, c, nc);
                    }
                }
                if (ordered && (fl & (one ? F_ADDX : F_ADD2X))) {
                    Atom gs[MAXA]; int ngs = shift_atoms(g, ng, -SH_DX[t], -SH_DY[t], gs);
                    if (ngs >= 0 && dist_of(gs, ngs) <= gdist) {
                        Atom as[MAXA], bs[MAXA];
                        int nas = shift_atoms(a, na, -SH_DX[t], -SH_DY[t], as);
                        int nbs = shift_atoms(b, nb, -SH_DX[t], -SH_DY[t], bs);
                        if (nas >= 0 && nbs >= 0)
                            EMIT2(op_for(t, OP_ADDX, OP_ADD2X), gid, one ? 1 : 2, SH_D0[t], SH_D1[t], as, nas, bs, nbs);
                    }
                }
            }
        }
    }
    if (!split_it || ng < 2 || !(fl & F_ADD)) goto pow2;
    /* parts of G equal to a translated part of another Goal (the shared sub-expressions) */
    for (int oi = 0; oi < no; oi++) {
        uint32_t hid = others[oi];
        if (hid == gid || is_initial_id(s, hid)) continue;
        const Goal *H = G_(s, hid);
        const Atom *h = A_(s, hid);
        int16_t *m = s->gmap;
        for (int i = 0; i < ng; i++) m[g[i].pos] = g[i].c;
        int best_n[3] = {0, 0, 0};
        Atom best_a[3][MAXA]; int best_na[3] = {0, 0, 0};
        int tried_dx[256], tried_dy[256], ntried = 0;
        for (int i = 0; i < ng; i++) {
            for (int j = 0; j < H->n; j++) {
                if (PZ(g[i].pos) != PZ(h[j].pos)) continue;
                int dx = PX(g[i].pos) - PX(h[j].pos), dy = PY(g[i].pos) - PY(h[j].pos);
                int seen = 0;
                for (int q = 0; q < ntried && !seen; q++) seen = tried_dx[q] == dx && tried_dy[q] == dy;
                if (seen || ntried >= 256) continue;
                tried_dx[ntried] = dx; tried_dy[ntried++] = dy;
                int tot = 0, k = 0;
                for (int q = 0; q < H->n; q++) {
                    int x = PX(h[q].pos) + dx, y = PY(h[q].pos) + dy;
                    if (x < -XOFF || x >= XOFF || y < -XOFF || y >= XOFF) continue;
                    int p = MKPOS(x, y, PZ(h[q].pos));
                    int c1 = m[p], c2 = h[q].c;
                    if (c1 && ((c1 > 0) == (c2 > 0))) {
                        int mm = (c1 < 0 ? -c1 : c1) < (c2 < 0 ? -c2 : c2) ? (c1 < 0 ? -c1 : c1) : (c2 < 0 ? -c2 : c2);
                        a[k].pos = (uint16_t)p; a[k++].c = (int16_t)(c1 > 0 ? mm : -mm);
                        tot += mm;
                    }
                }
                if (tot < 2 || k < 2) continue;
                for (int q = 1; q < k; q++) {       /* sort by position */
                    Atom v = a[q]; int w = q - 1;
                    while (w >= 0 && a[w].pos > v.pos) { a[w + 1] = a[w]; w--; }
                    a[w + 1] = v;
                }
                /* keep the three largest (the first found on ties) */
                for (int slot = 0; slot < 3; slot++) {
                    if (tot > best_n[slot]) {
                        for (int z = 2; z > slot; z--) {
                            best_n[z] = best_n[z - 1]; best_na[z] = best_na[z - 1];
                            memcpy(best_a[z], best_a[z - 1], best_na[z] * sizeof(Atom));
                        }
                        best_n[slot] = tot; best_na[slot] = k;
                        memcpy(best_a[slot], a, k * sizeof(Atom));
                        break;
                    }
                }
            }
        }
        for (int i = 0; i < ng; i++) m[g[i].pos] = 0;
        for (int slot = 0; slot < 3 && best_n[slot]; slot++) {
            if (best_na[slot] == ng && !cmp_atoms(best_a[slot], best_na[slot], g, ng)) continue;
            nr = add_atoms(g, ng, best_a[slot], best_na[slot], -1, r);
            if (!nr) continue;
            EMIT2(OP_ADD, gid, 0, 0, 0, best_a[slot], best_na[slot], r, nr);
            if (fl & F_SUB) { nc = neg_atoms(r, nr, c); EMIT2(OP_SUB, gid, 0, 0, 0, best_a[slot], best_na[slot], c, nc); }
        }
    }
    /* antisymmetry: G = S.t - S + R (subx / sub2x; both operands S when R is empty) */
    for (int t = 0; t < 12; t++) {
        int one = t < 4;
        if (!(fl & (one ? F_SUBX : F_SUB2X))) continue;
        int ns;
        if (!pos_match_split(s, g, ng, SH_DX[t], SH_DY[t], 1, a, &ns, r, &nr)) continue;
        int op = op_for(t, OP_SUBX, OP_SUB2X);
        if (!nr) EMIT2(op, gid, one ? 1 : 2, SH_D0[t], SH_D1[t], a, ns, a, ns);
        else {
            nb = add_atoms(a, ns, r, nr, -1, b);               /* G = S.t - (S - R) */
            if (nb) EMIT2(op, gid, one ? 1 : 2, SH_D0[t], SH_D1[t], a, ns, b, nb);
            Atom rs[MAXA]; int nrs = shift_atoms(r, nr, -SH_DX[t], -SH_DY[t], rs);
            if (nrs >= 0) {                                  /* G = (S + R.t^-1).t - S */
                nc = add_atoms(a, ns, rs, nrs, 1, c);
                if (nc) EMIT2(op, gid, one ? 1 : 2, SH_D0[t], SH_D1[t], c, nc, a, ns);
            }
        }
    }
    /* translational self-similarity: G = S + S.t + R; with three copies S + S.t + S.2t (+ R) */
    {
        int tdx[MAXA], tdy[MAXA], nt = 0;
        for (int i = 0; i < ng; i++) for (int j = i + 1; j < ng; j++) {
            if (PZ(g[i].pos) != PZ(g[j].pos)) continue;
            int dx = PX(g[j].pos) - PX(g[i].pos), dy = PY(g[j].pos) - PY(g[i].pos);
            int seen = 0;
            for (int q = 0; q < nt && !seen; q++) seen = tdx[q] == dx && tdy[q] == dy;
            if (seen || nt >= MAXA) continue;
            tdx[nt] = dx; tdy[nt++] = dy;
            int ns;
            if (!pos_match_split(s, g, ng, dx, dy, 0, a, &ns, r, &nr)) continue;
            Atom st[MAXA]; int nst = shift_atoms(a, ns, dx, dy, st);
            if (nst < 0) continue;
            if (!nr) EMIT2(OP_ADD, gid, 0, 0, 0, a, ns, st, nst);
            else {
                nb = add_atoms(a, ns, r, nr, 1, b);
                EMIT2(OP_ADD, gid, 0, 0, 0, b, nb, st, nst);
                nc = add_atoms(st, nst, r, nr, 1, c);
                EMIT2(OP_ADD, gid, 0, 0, 0, a, ns, c, nc);
                if ((fl & F_ADD3) && cmp_atoms(a, ns, r, nr) && cmp_atoms(st, nst, r, nr))
                    EMIT3(gid, a, ns, st, nst, r, nr);
            }
            if (s->three_copies && (fl & F_ADD3)) {
                int ns3;
                Atom s3[MAXA], r3[MAXA], m1[MAXA], m2[MAXA]; int nr3, n1, n2;
                if (triple_match(s, g, ng, dx, dy, s3, &ns3, r3, &nr3)
                    && (n1 = shift_atoms(s3, ns3, dx, dy, m1)) >= 0 && (n2 = shift_atoms(s3, ns3, 2 * dx, 2 * dy, m2)) >= 0) {
                    if (!nr3) EMIT3(gid, s3, ns3, m1, n1, m2, n2);
                    else {
                        nb = add_atoms(s3, ns3, r3, nr3, 1, b);
                        EMIT3(gid, b, nb, m1, n1, m2, n2);
                        nc = add_atoms(m1, n1, r3, nr3, 1, c);
                        EMIT3(gid, s3, ns3, c, nc, m2, n2);
                    }
                }
            }
        }
    }
    /* the halving split: G = H + (H + L), with L the lowest signed digit of each odd coefficient (its
     * non-adjacent form: c = 4q + 1 gives +1, c = 4q + 3 gives -1) and H = (G - L) / 2. Large integer
     * coefficients with a few odd ones (a centre 14 among rings of -2 and -1) then make H once and
     * use it twice, the low digits joining one copy, instead of building each coefficient apart.
     * Only for Goals with a coefficient above the input's own weight 2^d: those are built by doubling,
     * and H + H is a doubling. Below it (fractional kernels: every value at most 1) coefficients are
     * built by halving the input, where doubling H undoes a halving that G need not have had. */
    if (G->maxm > (1 << s->d)) {
        int nl = 0, nh = 0;
        for (int i = 0; i < ng; i++) {
            int cc = g[i].c, l = 0;
            if (cc & 1) l = ((cc % 4) + 4) % 4 == 1 ? 1 : -1;
            if (l) { c[nl].pos = g[i].pos; c[nl++].c = (int16_t)l; }
            if (cc - l) { a[nh].pos = g[i].pos; a[nh++].c = (int16_t)((cc - l) / 2); }
        }
        if (nh && nl) {
            nb = add_atoms(a, nh, c, nl, 1, b);                 /* K = H + L */
            if (nb) EMIT2(OP_ADD, gid, 0, 0, 0, a, nh, b, nb);
        }
    }
    /* sign split, and the signed-digit split (G = P - N with P, N the positive and negative digits) */
    {
        int np = 0, nn = 0;
        for (int i = 0; i < ng; i++) { if (g[i].c > 0) a[np++] = g[i]; else { b[nn].pos = g[i].pos; b[nn++].c = g[i].c; } }
        if (np && nn) {
            EMIT2(OP_ADD, gid, 0, 0, 0, a, np, b, nn);
            if (fl & F_SUB) { nc = neg_atoms(b, nn, c); EMIT2(OP_SUB, gid, 0, 0, 0, a, np, c, nc); }
        }
        if (fl & F_SUB) {
            np = nn = 0;
            for (int i = 0; i < ng; i++) {
                int v = g[i].c < 0 ? -g[i].c : g[i].c, pos = 0, neg = 0, bit = 1;
                while (v) {         /* non-adjacent form: |c| = pos - neg */
                    if (v & 1) { if ((v & 3) == 3) { neg += bit; v += 1; } else { pos += bit; v -= 1; } }
                    v >>= 1; bit <<= 1;
                }
                int P = g[i].c > 0 ? pos : neg, N = g[i].c > 0 ? neg : pos;     /* c = P - N */
                if (P) { a[np].pos = g[i].pos; a[np++].c = (int16_t)P; }
                if (N) { b[nn].pos = g[i].pos; b[nn++].c = (int16_t)N; }
            }
            if (np && nn) EMIT2(OP_SUB, gid, 0, 0, 0, a, np, b, nn);
        }
    }
    /* single positions peeled, and splits by a line of columns or rows */
    for (int i = 0; i < ng; i++) {
        a[0] = g[i];
        nr = add_atoms(g, ng, a, 1, -1, r);
        EMIT2(OP_ADD, gid, 0, 0, 0, a, 1, r, nr);
    }
    for (int axis = 0; axis < 2; axis++) {
        int vals[64], nv = 0;
        for (int i = 0; i < ng; i++) {
            int v = axis ? PY(g[i].pos) : PX(g[i].pos), seen = 0;
            for (int q = 0; q < nv && !seen; q++) seen = vals[q] == v;
            if (!seen && nv < 64) vals[nv++] = v;
        }
        for (int i = 1; i < nv; i++) { int v = vals[i], j = i - 1; while (j >= 0 && vals[j] > v) { vals[j + 1] = vals[j]; j--; } vals[j + 1] = v; }
        for (int ci = 1; ci < nv; ci++) {
            int cut = vals[ci];
            na = 0;
            for (int i = 0; i < ng; i++) if ((axis ? PY(g[i].pos) : PX(g[i].pos)) < cut) a[na++] = g[i];
            nb = add_atoms(g, ng, a, na, -1, b);
            EMIT2(OP_ADD, gid, 0, 0, 0, a, na, b, nb);
        }
    }
pow2:
    /* a coefficient just below a power of two: c = 2^k - 2^j (7 = 8 - 1) */
    if ((fl & F_POW2) && (fl & F_SUB)) {
        for (int i = 0; i < ng; i++) {
            int m = g[i].c < 0 ? -g[i].c : g[i].c;
            if (m < 3) continue;
            int k = 1;
            while (k <= m) k <<= 1;
            int ex = k - m;
            if ((ex & (ex - 1)) == 0 && ex < m) {
                int sg = g[i].c < 0 ? -1 : 1;
                memcpy(a, g, ng * sizeof(Atom));
                a[i].c = (int16_t)(sg * k);
                b[0].pos = g[i].pos; b[0].c = (int16_t)(sg * ex);
                EMIT2(OP_SUB, gid, 0, 0, 0, a, ng, b, 1);
            }
        }
    }
}

static int cand_cmp(const void *x, const void *y) {
    const Cand *a = x, *b = y;
    if (a->cost < b->cost) return -1;
    if (a->cost > b->cost) return 1;
    return a->idx - b->idx;
}

/* every legal child of a bag, best first (or in a seeded order for the random traversal) */
static int generate(S *s, const uint32_t *bag, int n, uint64_t hash) {
    if (!s->keep_temps) temps_reset(s);
    s->ncands = 0;
    cset_clear(s);
    Ctx cx = {bag, n, hash};
    /* the Goal whose splits are tried (focus: the largest, by Atoms over their common power of two) */
    uint32_t focus = 0xffffffffu;
    int maxsize = 0;
    if (s->focus) {
        double best = -1;
        for (int i = 0; i < n; i++) {
            if (is_initial_id(s, bag[i])) continue;
            const Goal *g = G_(s, bag[i]);
            double v = (double)g->size / g->pow2;
            if (v > best || (v == best && focus != 0xffffffffu && cmp_atoms(A_(s, bag[i]), g->n, A_(s, focus), G_(s, focus)->n) > 0)) {
                best = v; focus = bag[i];
            }
        }
    }
    for (int i = 0; i < n; i++) if (G_(s, bag[i])->size > maxsize) maxsize = G_(s, bag[i])->size;
    int exhaustive = maxsize <= s->exhaustive;
    for (int i = 0; i < n; i++) {
        if (i && bag[i] == bag[i - 1]) continue;
        int count = 1;
        while (i + count < n && bag[i + count] == bag[i]) count++;
        if (is_initial_id(s, bag[i]) && count == 1) continue;
        gen_goal(s, &cx, bag[i], count, focus == 0xffffffffu || focus == bag[i], exhaustive);
        if (s->ncands > 200000) break;
    }
    if (s->traversal == T_RANDOM) {
        for (int i = 0; i < s->ncands; i++)
            if (s->cands[i].cost > -1e299) s->cands[i].cost = (double)(mix(s->cands[i].hash ^ s->salt) >> 11);
    }
    qsort(s->cands, s->ncands, sizeof(Cand), cand_cmp);
    return s->ncands;
}

/* ------------------------------------------------------------------ nodes */
static Node *node_new(S *s, Node *parent, const uint32_t *bag, int n, const Step *st) {
    Node *x = malloc(sizeof(Node) + n * sizeof(uint32_t));
    if (!x) abort();
    memset(x, 0, sizeof(Node));
    x->parent = parent;
    if (parent) { parent->refs++; x->depth = (uint16_t)(parent->depth + 1); }
    if (st) x->step = *st;
    x->n = (uint8_t)n;
    memcpy(x->bag, bag, n * sizeof(uint32_t));
    x->hash = bag_hash(s, bag, n);
    x->total = -1;
    x->next = s->live; x->prev = NULL;
    if (s->live) s->live->prev = x;
    s->live = x;
    s->live_nodes++;
    s->live_bytes += sizeof(Node) + n * sizeof(uint32_t);
    return x;
}

static void node_release(S *s, Node *x) {
    while (x && x->refs == 0 && !x->in_queue) {
        Node *p = x->parent;
        if (x->prev) x->prev->next = x->next; else s->live = x->next;
        if (x->next) x->next->prev = x->prev;
        if (x->chunk) { s->live_bytes -= x->chunk_n * (sizeof(Step) + sizeof(float)); free(x->chunk); free(x->chunk_cost); }
        s->live_bytes -= sizeof(Node) + x->n * sizeof(uint32_t);
        s->live_nodes--;
        free(x);
        if (p) p->refs--;
        x = p;
    }
}

/* the child bag of `st` from `parent` (ids permanent) */
static int child_bag(const S *s, const Node *parent, const Step *st, uint32_t *out) {
    int cn = 0, removed = 0;
    for (int i = 0; i < parent->n; i++) {
        if (!removed && parent->bag[i] == st->up) { removed = 1; continue; }
        out[cn++] = parent->bag[i];
    }
    int same = (st->op == OP_SUB || st->op == OP_SUBX || st->op == OP_SUB2X) && st->nl == 2 && st->lo[0] == st->lo[1];
    int nneed = same ? 1 : st->nl;
    for (int i = 0; i < nneed; i++) {
        int want = 0, have = 0;
        for (int j = 0; j < nneed; j++) if (st->lo[j] == st->lo[i]) want++;
        for (int j = 0; j < cn; j++) if (out[j] == st->lo[i]) have++;
        if (have < want) out[cn++] = st->lo[i];
    }
    sort_bag(s, out, cn);
    return cn;
}

/* keep children [start, start + chunk) of the sorted list in the node, with permanent ids */
static void fill_chunk(S *s, Node *x, int start) {
    int total = s->ncands, k = total - start;
    if (k > s->chunk) k = s->chunk;
    if (k < 0) k = 0;
    if (x->chunk) { s->live_bytes -= x->chunk_n * (sizeof(Step) + sizeof(float)); free(x->chunk); free(x->chunk_cost); }
    x->chunk = k ? malloc(k * sizeof(Step)) : NULL;
    x->chunk_cost = k ? malloc(k * sizeof(float)) : NULL;
    for (int i = 0; i < k; i++) {
        Step st = s->cands[start + i].step;
        st.up = make_permanent(s, st.up);
        for (int j = 0; j < st.nl; j++) st.lo[j] = make_permanent(s, st.lo[j]);
        x->chunk[i] = st;
        x->chunk_cost[i] = (float)s->cands[start + i].cost;
    }
    x->chunk_start = start;
    x->chunk_n = k;
    x->total = total;
    s->live_bytes += k * (sizeof(Step) + sizeof(float));
}

/* ------------------------------------------------------------------ visited bags */
static int visited_check(S *s, uint64_t h, int depth) {     /* 1: go on (recorded) */
    if (!h) h = 1;
    size_t mask = s->vcap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        if (!s->vkeys[i]) {
            if (s->vcount * 10 >= s->vcap * 7) return 1;       /* full: not recorded until cleared */
            s->vkeys[i] = h; s->vdepth[i] = (uint16_t)depth; s->vcount++;
            return 1;
        }
        if (s->vkeys[i] == h) {
            if (s->vdepth[i] <= depth) return 0;
            s->vdepth[i] = (uint16_t)depth;
            return 1;
        }
    }
}

static void visited_clear(S *s) {
    memset(s->vkeys, 0, s->vcap * sizeof(uint64_t));
    s->vcount = 0;
}

/* ------------------------------------------------------------------ plans */
static void put_goal(S *s, uint32_t id) {
    const Goal *g = G_(s, id);
    const Atom *a = A_(s, id);
    s->plans = grow(s->plans, &s->cap_plans, s->nplans_int + 1 + 4 * g->n, sizeof(int32_t));
    s->plans[s->nplans_int++] = g->n;
    for (int i = 0; i < g->n; i++) {
        s->plans[s->nplans_int++] = PX(a[i].pos);
        s->plans[s->nplans_int++] = PY(a[i].pos);
        s->plans[s->nplans_int++] = PZ(a[i].pos);
        s->plans[s->nplans_int++] = a[i].c;
    }
}

static void put_int(S *s, int32_t v) {
    s->plans = grow(s->plans, &s->cap_plans, s->nplans_int + 1, sizeof(int32_t));
    s->plans[s->nplans_int++] = v;
}

/* a plan as ints: length L; the L + 1 bags from the input to the Final-Goals; the L steps forwards
 * (op, number of directions, d0, d1, upper Goal, number of lowers, lower Goals) */
static void record_plan(S *s, Node *leaf) {
    Node *path[4096]; int L = 0;
    for (Node *x = leaf; x; x = x->parent) { if (L >= 4096) return; path[L++] = x; }
    if (s->nplans < 64) s->plan_nodes[s->nplans] = s->nodes;
    put_int(s, L - 1);
    for (int i = 0; i < L; i++) {
        put_int(s, path[i]->n);
        for (int j = 0; j < path[i]->n; j++) put_goal(s, path[i]->bag[j]);
    }
    for (int i = 0; i < L - 1; i++) {
        const Step *st = &path[i]->step;
        put_int(s, st->op); put_int(s, st->nd); put_int(s, st->d0); put_int(s, st->d1);
        put_goal(s, st->up);
        put_int(s, st->nl);
        for (int j = 0; j < st->nl; j++) put_goal(s, st->lo[j]);
    }
    s->nplans++;
}

/* ------------------------------------------------------------------ deque */
static void dq_push(S *s, Node *x, int front) {
    if (s->dq_len == s->dq_cap) {
        size_t nc = s->dq_cap ? s->dq_cap * 2 : 1024;
        Node **q = malloc(nc * sizeof(Node *));
        if (!q) abort();
        for (size_t i = 0; i < s->dq_len; i++) q[i] = s->dq[(s->dq_head + i) % s->dq_cap];
        free(s->dq);
        s->dq = q; s->dq_cap = nc; s->dq_head = 0;
    }
    if (front) { s->dq_head = (s->dq_head + s->dq_cap - 1) % s->dq_cap; s->dq[s->dq_head] = x; }
    else s->dq[(s->dq_head + s->dq_len) % s->dq_cap] = x;
    s->dq_len++;
    x->in_queue = 1;
}

static Node *dq_pop(S *s, int front) {
    Node *x;
    if (front) { x = s->dq[s->dq_head]; s->dq_head = (s->dq_head + 1) % s->dq_cap; }
    else x = s->dq[(s->dq_head + s->dq_len - 1) % s->dq_cap];
    s->dq_len--;
    x->in_queue = 0;
    return x;
}

static size_t mem_used(const S *s) {
    return s->live_bytes + s->natoms * sizeof(Atom) + s->ngoals * sizeof(Goal) + s->icap * 4
           + s->vcap * 10 + s->dq_cap * sizeof(Node *) + s->heap_cap * (sizeof(Node *) + sizeof(float))
           + s->cap_cands * sizeof(Cand);
}

/* ------------------------------------------------------------------ memory: trim and compact
 * Drop the older half of the frontier (the back of the deque, or the worse half of the heap), forget
 * the visited bags, then rebuild the Goal pool with only the Goals live nodes still name. */
static void compact(S *s) {
    uint32_t *map = malloc(s->ngoals * sizeof(uint32_t));
    for (uint32_t i = 0; i < s->ngoals; i++) map[i] = 0xffffffffu;
    Atom *na = NULL; size_t nna = 0, cna = 0;
    Goal *ng = NULL; size_t nng = 0, cng = 0;
#define KEEP(id) do { uint32_t _i = (id); if (map[_i] == 0xffffffffu) { \
        const Goal *_g = &s->goals[_i]; ng = grow(ng, &cng, nng + 1, sizeof(Goal)); \
        na = grow(na, &cna, nna + _g->n, sizeof(Atom)); ng[nng] = *_g; ng[nng].off = (uint32_t)nna; \
        memcpy(&na[nna], &s->atoms[_g->off], _g->n * sizeof(Atom)); nna += _g->n; map[_i] = (uint32_t)nng++; } } while (0)
    for (int z = 0; z < s->nchan; z++) KEEP(s->initial[z]);
    for (int i = 0; i < s->nfinal; i++) KEEP(s->root[i]);
    for (Node *x = s->live; x; x = x->next) {
        for (int i = 0; i < x->n; i++) KEEP(x->bag[i]);
        if (x->parent) { KEEP(x->step.up); for (int j = 0; j < x->step.nl; j++) KEEP(x->step.lo[j]); }
        for (int c = 0; c < x->chunk_n; c++) {
            KEEP(x->chunk[c].up);
            for (int j = 0; j < x->chunk[c].nl; j++) KEEP(x->chunk[c].lo[j]);
        }
    }
#undef KEEP
    for (Node *x = s->live; x; x = x->next) {
        for (int i = 0; i < x->n; i++) x->bag[i] = map[x->bag[i]];
        if (x->parent) { x->step.up = map[x->step.up]; for (int j = 0; j < x->step.nl; j++) x->step.lo[j] = map[x->step.lo[j]]; }
        for (int c = 0; c < x->chunk_n; c++) {
            x->chunk[c].up = map[x->chunk[c].up];
            for (int j = 0; j < x->chunk[c].nl; j++) x->chunk[c].lo[j] = map[x->chunk[c].lo[j]];
        }
    }
    for (int z = 0; z < s->nchan; z++) s->initial[z] = map[s->initial[z]];
    for (int i = 0; i < s->nfinal; i++) s->root[i] = map[s->root[i]];
    free(map);
    free(s->atoms); free(s->goals);
    s->atoms = na; s->natoms = nna; s->cap_atoms = cna;
    s->goals = ng; s->ngoals = (uint32_t)nng; s->cap_goals = (uint32_t)cng;
    size_t cap = 1024;
    while (cap < 2 * nng) cap *= 2;
    itab_rebuild(s, cap);
}

static void trim(S *s) {
    s->trims++;
    if (s->traversal == T_BEST) {
        size_t keep = s->heap_len / 2;
        /* the heap's second half: its leaves, mostly the worse keys (a prefix of a heap is a heap) */
        for (size_t i = keep; i < s->heap_len; i++) { s->heap[i]->in_queue = 0; node_release(s, s->heap[i]); }
        s->heap_len = keep;
    } else {
        size_t keep = s->dq_len / 2;
        while (s->dq_len > keep) {
            Node *x = dq_pop(s, s->traversal == T_DFS ? 1 : 0);
            node_release(s, x);
        }
    }
    visited_clear(s);
    compact(s);
}

/* ------------------------------------------------------------------ one node's visit (all traversals) */
/* returns 1 when the node should produce children */
static int visit(S *s, Node *x) {
    if (!visited_check(s, x->hash, x->depth)) return 0;
    s->nodes++;
    if (bag_is_initial(s, x->bag, x->n)) {
        if (x->depth < s->best) { s->best = x->depth; record_plan(s, x); }
        return 0;
    }
    if (x->depth + lower_bound(s, x->bag, x->n) >= s->best) return 0;
    return 1;
}

/* the node's next child, or NULL when it has none left */
static Node *next_child(S *s, Node *x) {
    if (x->total < 0 || x->cursor >= x->chunk_start + x->chunk_n) {
        if (x->total >= 0 && x->cursor >= x->total) return NULL;
        generate(s, x->bag, x->n, x->hash);
        fill_chunk(s, x, x->total < 0 ? 0 : x->cursor);
        temps_reset(s);
    }
    if (x->cursor >= x->total) return NULL;
    const Step *st = &x->chunk[x->cursor - x->chunk_start];
    x->cursor++;
    uint32_t cb[MAXR + 3];
    int cn = child_bag(s, x, st, cb);
    return node_new(s, x, cb, cn, st);
}

/* ------------------------------------------------------------------ CGDS / DFS / random */
static void run_deque(S *s, long long target, double stop_at) {
    int front = s->traversal != T_DFS;
    long long check = 0;
    while (s->dq_len && s->nodes < target) {
        if (++check % 64 == 0) {
            if (mem_used(s) > s->mem_limit) trim(s);
            struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
            if (ts.tv_sec + ts.tv_nsec * 1e-9 > stop_at) break;
        }
        Node *x = dq_pop(s, front);
        if (x->total < 0) {
            if (!visit(s, x)) { node_release(s, x); continue; }
        } else if (x->depth + lower_bound(s, x->bag, x->n) >= s->best) { node_release(s, x); continue; }
        Node *c = next_child(s, x);
        if (!c) { node_release(s, x); continue; }
        if (front) { dq_push(s, c, 1); dq_push(s, x, 0); }
        else { dq_push(s, x, 0); dq_push(s, c, 0); }
    }
    if (!s->dq_len) s->exhausted = 1;
}

/* ------------------------------------------------------------------ weighted best-first */
static void heap_push(S *s, Node *x, float key) {
    if (s->heap_len == s->heap_cap) {
        s->heap_cap = s->heap_cap ? s->heap_cap * 2 : 1024;
        s->heap = realloc(s->heap, s->heap_cap * sizeof(Node *));
        s->heap_key = realloc(s->heap_key, s->heap_cap * sizeof(float));
    }
    size_t i = s->heap_len++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (s->heap_key[p] <= key) break;
        s->heap[i] = s->heap[p]; s->heap_key[i] = s->heap_key[p]; i = p;
    }
    s->heap[i] = x; s->heap_key[i] = key;
    x->in_queue = 1;
}

static Node *heap_pop(S *s) {
    Node *top = s->heap[0];
    Node *x = s->heap[--s->heap_len];
    float key = s->heap_key[s->heap_len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->heap_len) break;
        if (c + 1 < s->heap_len && s->heap_key[c + 1] < s->heap_key[c]) c++;
        if (s->heap_key[c] >= key) break;
        s->heap[i] = s->heap[c]; s->heap_key[i] = s->heap_key[c]; i = c;
    }
    if (s->heap_len) { s->heap[i] = x; s->heap_key[i] = key; }
    top->in_queue = 0;
    return top;
}

static void run_best_first(S *s, long long target, double stop_at) {
    long long check = 0;
    while (s->heap_len && s->nodes < target) {
        if (++check % 16 == 0) {
            if (mem_used(s) > s->mem_limit) trim(s);
            struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
            if (ts.tv_sec + ts.tv_nsec * 1e-9 > stop_at) break;
        }
        Node *x = heap_pop(s);
        if (!visit(s, x)) { node_release(s, x); continue; }
        generate(s, x->bag, x->n, x->hash);
        int k = s->ncands;
        for (int i = 0; i < k; i++) {
            Cand *c = &s->cands[i];
            Step st = c->step;
            st.up = make_permanent(s, st.up);
            for (int j = 0; j < st.nl; j++) st.lo[j] = make_permanent(s, st.lo[j]);
            uint32_t cb[MAXR + 3];
            int cn = child_bag(s, x, &st, cb);
            if (x->depth + 1 + lower_bound(s, cb, cn) >= s->best) continue;
            Node *y = node_new(s, x, cb, cn, &st);
            float key = c->cost < -1e299 ? -1e30f : (float)(x->depth + 1 + c->cost);
            heap_push(s, y, key);
        }
        temps_reset(s);
        node_release(s, x);
    }
    if (!s->heap_len) s->exhausted = 1;
}

/* ------------------------------------------------------------------ anytime beam search
 * Round r keeps the `width` cheapest bags of every depth (width doubling each round, no child of one
 * parent taking more than half of a beam); each round starts again from the Final-Goals with the
 * best length so far as the bound. */
static void beam_free_layer(S *s, Node **layer, int n) {
    for (int i = 0; i < n; i++) { layer[i]->in_queue = 0; node_release(s, layer[i]); }
}

static void beam_start_round(S *s) {
    s->beam_round++;
    if (s->beam_round > 1) s->beam_width *= 2;
    beam_free_layer(s, s->beam, s->beam_n);
    s->beam_n = 0;
    visited_clear(s);
    if (s->live == NULL) compact(s);
    Node *root = node_new(s, NULL, s->root, s->nfinal, NULL);
    s->beam[s->beam_n++] = root;
    root->in_queue = 1;
    s->beam_depth = 0;
}

static int ranked_cmp(const void *x, const void *y) {
    const Ranked *a = x, *b = y;
    if (a->cost < b->cost) return -1;
    if (a->cost > b->cost) return 1;
    return a->idx - b->idx;
}

/* Resumable: a slice may end between any two parents (node budget or clock) and the next one goes on
 * from there, so how a run is sliced never changes what it finds. */
static void beam_finish_layer(S *s) {
    s->keep_temps = 0;
    qsort(s->pool, s->np, sizeof(Ranked), ranked_cmp);
    s->next_n = 0;
    cset_clear(s);
    for (size_t i = 0; i < s->np && s->next_n < s->beam_width; i++) {
        Node *par = s->beam[s->pool[i].parent];
        uint32_t cb[MAXR + 3];
        Step *st = &s->pool[i].step;
        int cn = child_bag(s, par, st, cb);
        if (!cset_add(s, bag_hash(s, cb, cn))) continue;
        int init = bag_is_initial(s, cb, cn);
        if (!init && par->depth + 1 + lower_bound(s, cb, cn) >= s->best) continue;
        st->up = make_permanent(s, st->up);
        for (int j = 0; j < st->nl; j++) st->lo[j] = make_permanent(s, st->lo[j]);
        cn = child_bag(s, par, st, cb);
        Node *y = node_new(s, par, cb, cn, st);
        y->in_queue = 1;
        if (init) {
            s->nodes++;
            if (y->depth < s->best) { s->best = y->depth; record_plan(s, y); }
        }
        if (s->next_n >= s->beam_cap) {
            s->beam_cap *= 2;
            s->beam = realloc(s->beam, s->beam_cap * sizeof(Node *));
            s->next_beam = realloc(s->next_beam, s->beam_cap * sizeof(Node *));
        }
        s->next_beam[s->next_n++] = y;
    }
    s->np = 0;
    temps_reset(s);
    beam_free_layer(s, s->beam, s->beam_n);
    Node **t = s->beam; s->beam = s->next_beam; s->next_beam = t;
    s->beam_n = s->next_n;
    s->beam_bi = 0;
    s->beam_depth++;
}

static void run_beam(S *s, long long target, double stop_at) {
    long long check = 0;
    while (s->nodes < target) {
        if (++check % 16 == 0) {
            struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
            if (ts.tv_sec + ts.tv_nsec * 1e-9 > stop_at) break;
        }
        if (!s->beam_n) {
            if (s->beam_width > (1 << 20)) { s->exhausted = 1; break; }
            beam_start_round(s);
#ifdef BS_DEBUG
            fprintf(stderr, "round %d width %d nodes %lld best %d\n", s->beam_round, s->beam_width, s->nodes, s->best);
#endif
            continue;
        }
        if (s->beam_bi >= s->beam_n) { beam_finish_layer(s); continue; }
        /* expand the next parent of the layer: its best children join the pool */
        if (s->beam_bi == 0) { temps_reset(s); s->np = 0; }
        s->keep_temps = 1;      /* the layer's Lowers stay temporary until a child is kept */
        Node *x = s->beam[s->beam_bi];
        int bi = s->beam_bi++;
        if (!visit(s, x)) continue;
        generate(s, x->bag, x->n, x->hash);
        int lim = s->beam_width / 2;
        if (lim < 2) lim = 2;
        if (lim > 16) lim = 16;
        int k = s->ncands < lim ? s->ncands : lim;          /* diversity: no parent fills the beam */
        s->pool = grow(s->pool, &s->cap_pool, s->np + k, sizeof(Ranked));
        for (int i = 0; i < k; i++) {
            Ranked *r = &s->pool[s->np];
            r->step = s->cands[i].step;
            r->cost = s->cands[i].cost; r->parent = bi; r->idx = (int32_t)s->np;
            s->np++;
        }
    }
    s->keep_temps = 0;
}

/* ------------------------------------------------------------------ the API */
/* config: d, registers, flags, max_coef, max_radius, traversal, scaled, focus, exhaustive, chunk,
 *         jitter (1/1000), salt, memory limit (MB), best, triples, scaled_share, three_copies, beam width
 * goals:  n_final, then per Goal: n, (x, y, z, c) * n; then n_channels */
void *bs_new(const int32_t *cfg, const int32_t *goals) {
    S *s = calloc(1, sizeof(S));
    if (!s) return NULL;
    s->d = cfg[0]; s->regs = cfg[1]; s->flags = cfg[2]; s->max_coef = cfg[3]; s->max_radius = cfg[4];
    s->traversal = cfg[5]; s->scaled = cfg[6]; s->focus = cfg[7]; s->exhaustive = cfg[8];
    s->chunk = cfg[9] > 0 ? cfg[9] : 12; s->jitter = cfg[10] / 1000.0; s->salt = mix((uint64_t)(uint32_t)cfg[11] + 1);
    s->mem_limit = (size_t)cfg[12] << 20; s->best = cfg[13]; s->triples = cfg[14]; s->scaled_share = cfg[15];
    s->three_copies = cfg[16]; s->beam_width = cfg[17] > 0 ? cfg[17] : 1;
    if (s->regs > MAXR || s->max_radius + 2 >= XOFF) { free(s); return NULL; }
    shift_table_init(s);
    s->icap = 1 << 16; s->itab = calloc(s->icap, sizeof(uint32_t));
    s->tcap = 1 << 12; s->ttab = calloc(s->tcap, sizeof(uint32_t));
    s->ccap = 1 << 14; s->cset = calloc(s->ccap, sizeof(uint64_t));
    s->gmap = calloc(POSN, sizeof(int16_t));
    s->vcap = 1 << 20;
    while (s->vcap * 10 < s->mem_limit / 4 && s->vcap < (1u << 26)) s->vcap *= 2;
    s->vkeys = calloc(s->vcap, sizeof(uint64_t)); s->vdepth = calloc(s->vcap, sizeof(uint16_t));
    s->beam_cap = 1024; s->beam = malloc(s->beam_cap * sizeof(Node *)); s->next_beam = malloc(s->beam_cap * sizeof(Node *));
    if (!s->itab || !s->ttab || !s->cset || !s->gmap || !s->vkeys || !s->vdepth) return NULL;
    int k = 0, nf = goals[k++];
    if (nf > MAXR) { free(s); return NULL; }
    Atom a[MAXA];
    for (int i = 0; i < nf; i++) {
        int n = goals[k++];
        for (int j = 0; j < n; j++) {
            a[j].pos = MKPOS(goals[k], goals[k + 1], goals[k + 2]);
            a[j].c = (int16_t)goals[k + 3];
            k += 4;
        }
        for (int p = 1; p < n; p++) { Atom v = a[p]; int q = p - 1; while (q >= 0 && a[q].pos > v.pos) { a[q + 1] = a[q]; q--; } a[q + 1] = v; }
        s->root[i] = intern(s, a, n);
    }
    s->nfinal = nf;
    sort_bag(s, s->root, nf);
    s->nchan = goals[k++];
    for (int z = 0; z < s->nchan; z++) {
        a[0].pos = MKPOS(0, 0, z); a[0].c = (int16_t)(1 << s->d);
        s->initial[z] = intern(s, a, 1);
    }
    if (s->traversal == T_BEAM) s->beam_round = 0;
    else if (s->traversal == T_BEST) heap_push(s, node_new(s, NULL, s->root, nf, NULL), 0.0f);
    else dq_push(s, node_new(s, NULL, s->root, nf, NULL), 1);
    return s;
}

/* explore up to max_nodes more nodes or until the clock passes stop_at (CLOCK_MONOTONIC seconds);
 * returns the number of plans waiting to be read */
int bs_run(void *h, long long max_nodes, double stop_at) {
    S *s = h;
    long long target = s->nodes + max_nodes;
    if (s->exhausted) return s->nplans;
    if (s->traversal == T_BEAM) run_beam(s, target, stop_at);
    else if (s->traversal == T_BEST) run_best_first(s, target, stop_at);
    else run_deque(s, target, stop_at);
    return s->nplans;
}

long long bs_nodes(void *h) { return ((S *)h)->nodes; }
int bs_exhausted(void *h) { return ((S *)h)->exhausted; }
int bs_best(void *h) { return ((S *)h)->best; }
void bs_set_best(void *h, int best) { S *s = h; if (best < s->best) s->best = best; }
long long bs_memory(void *h) { return (long long)mem_used((S *)h); }
int bs_trims(void *h) { return ((S *)h)->trims; }
int bs_plan_count(void *h) { return ((S *)h)->nplans; }
long long bs_plan_nodes(void *h, int i) { S *s = h; return i < 64 ? s->plan_nodes[i] : s->nodes; }
long long bs_plans_size(void *h) { return (long long)((S *)h)->nplans_int; }

/* copy the serialised plans into out (bs_plans_size ints) and forget them */
void bs_take_plans(void *h, int32_t *out) {
    S *s = h;
    memcpy(out, s->plans, s->nplans_int * sizeof(int32_t));
    s->nplans_int = 0; s->nplans = 0;
}

void bs_trim(void *h) { trim((S *)h); }

/* the proven lower bound of the Final-Goals' bag (tests compare it with core/cain/lower_bound.py) */
int bs_root_bound(void *h) { S *s = h; return lower_bound(s, s->root, s->nfinal); }

/* every child of the Final-Goals' bag, in order, into the plan buffer (for tests): per child op, number
 * of directions, d0, d1, upper Goal, number of lowers, lower Goals, child bag (n, Goals); returns the count */
int bs_root_children(void *h) {
    S *s = h;
    s->nplans_int = 0; s->nplans = 0;
    int n = generate(s, s->root, s->nfinal, bag_hash(s, s->root, s->nfinal));
    for (int i = 0; i < n; i++) {
        const Cand *c = &s->cands[i];
        put_int(s, c->step.op); put_int(s, c->step.nd); put_int(s, c->step.d0); put_int(s, c->step.d1);
        put_goal(s, c->step.up);
        put_int(s, c->step.nl);
        for (int j = 0; j < c->step.nl; j++) put_goal(s, c->step.lo[j]);
        put_int(s, c->cn);
        for (int j = 0; j < c->cn; j++) put_goal(s, c->child[j]);
    }
    temps_reset(s);
    return n;
}

void bs_free(void *h) {
    S *s = h;
    if (!s) return;
    while (s->live) { Node *x = s->live; s->live = x->next; free(x->chunk); free(x->chunk_cost); free(x); }
    free(s->dq); free(s->heap); free(s->pool); free(s->heap_key); free(s->beam); free(s->next_beam);
    free(s->atoms); free(s->goals); free(s->itab); free(s->tatoms); free(s->tgoals); free(s->ttab);
    free(s->cands); free(s->cset); free(s->shift_table); free(s->gmap); free(s->vkeys); free(s->vdepth); free(s->plans);
    free(s);
}
