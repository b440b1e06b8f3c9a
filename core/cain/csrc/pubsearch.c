/* The published Cain tool's search (github ed741/cain, its README's recommended configuration),
 * written again in C so that it runs as one member of the engine's portfolio at a useful node
 * rate. Python drives it through ctypes (core/cain/native.py); every plan it reports is allocated
 * and verified by the engine like any other.
 *
 * What it reproduces, in the published tool's order (docs/cain.md, "The published search"):
 *   - Goals as dense kernels iterated x-major; Goal-Bags kept sorted by Atom count, a new Goal
 *     going before the first one with no more Atoms (the order pairs are generated in);
 *   - the Threshold pair generation: when no Goal of the bag has more than `threshold` Atoms, the
 *     exhaustive generator (every split into two parts with every two-operand macro, every
 *     three-part split for add with 3 operands, the power-of-two split, negation, halving, copies
 *     and moves), else the Atom-distance generator (a Goal against every Goal of the bag,
 *     itself included), both sorted by the Pattern heuristic (eq. 11-14 as the tool computes it);
 *   - CGDS with work stealing between `workers` deques (emulated in turn, so a run is repeatable),
 *     a shared table of the best depth each bag was seen at, the tool's culls (depth, Goal count
 *     against the remaining depth, total Atoms against twice the Final-Goals'), and its direct
 *     solver for a last Goal that is a move, negation or halving chain of the input.
 * Where it departs: registers are counted with the engine's rule as well (so every plan it
 * reports can be allocated), three-operand adds whose parts do not sum to the Goal are not offered
 * (the tool offers some and its verifier rejects their programs), and a parent keeps only its
 * next CHUNK children, making its list again when it needs more (the tool keeps every list, which
 * costs it gigabytes).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define OFF 64
#define SPAN 128
#define MAXE 256          /* positions in a Goal */
#define MAXB 12           /* Goals in a bag */
#define CHUNK 8           /* children a waiting parent keeps */
#define MAXW 16           /* virtual workers */

enum { OP_MOV, OP_MOVX, OP_MOV2X, OP_ADD2, OP_ADD3, OP_ADDX, OP_ADD2X, OP_SUB, OP_SUBX, OP_SUB2X,
       OP_NEG, OP_DIVC, OP_DIV, OP_DIVQ };

/* instruction-set flags (bit i = the published config's use* switch) */
enum { F_MOV = 1, F_MOVX = 2, F_MOV2X = 4, F_ADD = 8, F_ADD3 = 16, F_ADDX = 32, F_ADD2X = 64, F_SUB = 128,
       F_SUBX = 256, F_SUB2X = 512, F_NEG = 1024, F_DIV3 = 2048, F_DIV4 = 4096, F_DIVQ = 8192, F_POW2 = 16384 };

typedef struct { uint16_t pos; int16_t c; } Ent;

static inline int ex(uint16_t p) { return (int)(p / SPAN) - OFF; }
static inline int ey(uint16_t p) { return (int)(p % SPAN) - OFF; }

/* A Goal in a buffer, with the facts the heuristic reads. */
typedef struct {
    int n;
    int total, adist, minc, maxc;
    long sx, sy;
    uint64_t hash, shape;
    Ent e[MAXE];
} TG;

/* ------------------------------------------------------------------ Goal arithmetic */

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 29);
}

static void tg_finish(TG *g) {
    int total = 0, adist = 0, mn = 1 << 30, mx = 0;
    long sx = 0, sy = 0;
    uint64_t h = 0x1234567ULL, s = 0x7654321ULL;
    int p0 = g->n ? g->e[0].pos : 0;
    for (int i = 0; i < g->n; i++) {
        int c = g->e[i].c, a = c < 0 ? -c : c;
        int x = ex(g->e[i].pos), y = ey(g->e[i].pos);
        total += a;
        adist += a * ((x < 0 ? -x : x) + (y < 0 ? -y : y) + (c < 0));
        if (a < mn) mn = a;
        if (a > mx) mx = a;
        sx += (long)c * x;
        sy += (long)c * y;
        h = mix(h, ((uint64_t)g->e[i].pos << 20) ^ (uint64_t)(uint16_t)c);
        s = mix(s, ((uint64_t)(uint16_t)(g->e[i].pos - p0) << 20) ^ (uint64_t)(uint16_t)c);
    }
    g->total = total; g->adist = adist; g->minc = g->n ? mn : 0; g->maxc = mx;
    g->sx = sx; g->sy = sy; g->hash = h ^ (uint64_t)g->n; g->shape = s ^ ((uint64_t)g->n << 40);
}

/* translate by (dx, dy); 0 when a position leaves the representable window */
static int tg_tr(const TG *a, int dx, int dy, TG *o) {
    int k = dx * SPAN + dy;
    for (int i = 0; i < a->n; i++) {
        int x = ex(a->e[i].pos) + dx, y = ey(a->e[i].pos) + dy;
        if (x <= -OFF || x >= OFF - 1 || y <= -OFF || y >= OFF - 1) return 0;
        o->e[i].pos = (uint16_t)(a->e[i].pos + k);
        o->e[i].c = a->e[i].c;
    }
    o->n = a->n;
    tg_finish(o);
    return 1;
}

static void tg_neg(const TG *a, TG *o) {
    for (int i = 0; i < a->n; i++) { o->e[i].pos = a->e[i].pos; o->e[i].c = (int16_t)-a->e[i].c; }
    o->n = a->n;
    tg_finish(o);
}

/* a + s*b (s = 1 or -1); 0 on overflow of the buffer or a coefficient */
static int tg_addsub(const TG *a, const TG *b, int s, TG *o) {
    int i = 0, j = 0, n = 0;
    while (i < a->n || j < b->n) {
        int pos, c;
        if (j >= b->n || (i < a->n && a->e[i].pos < b->e[j].pos)) { pos = a->e[i].pos; c = a->e[i].c; i++; }
        else if (i >= a->n || b->e[j].pos < a->e[i].pos) { pos = b->e[j].pos; c = s * b->e[j].c; j++; }
        else { pos = a->e[i].pos; c = a->e[i].c + s * b->e[j].c; i++; j++; }
        if (c) {
            if (n >= MAXE || c > 30000 || c < -30000) return 0;
            o->e[n].pos = (uint16_t)pos; o->e[n].c = (int16_t)c; n++;
        }
    }
    o->n = n;
    tg_finish(o);
    return 1;
}

/* ArrayGoal.without: the Atoms of a that b does not hold (same-sign counts removed, never past 0) */
static void tg_without(const TG *a, const TG *b, TG *o) {
    int j = 0, n = 0;
    for (int i = 0; i < a->n; i++) {
        int c = a->e[i].c;
        while (j < b->n && b->e[j].pos < a->e[i].pos) j++;
        if (j < b->n && b->e[j].pos == a->e[i].pos) {
            int t = b->e[j].c;
            if (t < 0 && c < 0) c = t < c ? 0 : c - t;
            else if (t > 0 && c > 0) c = t > c ? 0 : c - t;
        }
        if (c) { o->e[n].pos = a->e[i].pos; o->e[n].c = (int16_t)c; n++; }
    }
    o->n = n;
    tg_finish(o);
}

static int tg_same(const TG *a, const TG *b) {
    return a->hash == b->hash && a->n == b->n && memcmp(a->e, b->e, sizeof(Ent) * (size_t)a->n) == 0;
}

/* big.hasSubGoal(small): small's Atoms are all in big (same sign, no larger count) */
static int has_sub(const Ent *be, int bn, const Ent *se, int sn) {
    int j = 0;
    for (int i = 0; i < sn; i++) {
        int c = se[i].c, t = 0;
        while (j < bn && be[j].pos < se[i].pos) j++;
        if (j < bn && be[j].pos == se[i].pos) t = be[j].c;
        if (c > 0 && c > t) return 0;
        if (c < 0 && c < t) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ interned Goals */

typedef struct {
    uint32_t off;
    uint16_t n;
    int total, adist, minc, maxc;
    long sx, sy;
    uint64_t hash, shape;
} GInfo;

typedef struct {
    GInfo *g; int ng, capg;
    Ent *pool; size_t npool, cappool;
    int32_t *tab; size_t tabcap;   /* open addressing: goal id + 1, 0 = empty */
} Goals;

static const Ent *gent(const Goals *G, int id) { return G->pool + G->g[id].off; }

static void g_view(const Goals *G, int id, TG *o) {
    const GInfo *gi = &G->g[id];
    o->n = gi->n;
    memcpy(o->e, gent(G, id), sizeof(Ent) * gi->n);
    o->total = gi->total; o->adist = gi->adist; o->minc = gi->minc; o->maxc = gi->maxc;
    o->sx = gi->sx; o->sy = gi->sy; o->hash = gi->hash; o->shape = gi->shape;
}

static int g_rehash(Goals *G, size_t cap) {
    int32_t *t = calloc(cap, sizeof(int32_t));
    if (!t) return 0;
    for (int id = 0; id < G->ng; id++) {
        size_t k = G->g[id].hash & (cap - 1);
        while (t[k]) k = (k + 1) & (cap - 1);
        t[k] = id + 1;
    }
    free(G->tab);
    G->tab = t; G->tabcap = cap;
    return 1;
}

static int g_intern(Goals *G, const TG *a) {
    if ((size_t)(G->ng + 1) * 2 > G->tabcap && !g_rehash(G, G->tabcap ? G->tabcap * 2 : 1 << 12)) return -1;
    size_t k = a->hash & (G->tabcap - 1);
    while (G->tab[k]) {
        int id = G->tab[k] - 1;
        const GInfo *gi = &G->g[id];
        if (gi->hash == a->hash && gi->n == a->n && memcmp(gent(G, id), a->e, sizeof(Ent) * (size_t)a->n) == 0)
            return id;
        k = (k + 1) & (G->tabcap - 1);
    }
    if (G->ng == G->capg) {
        int nc = G->capg ? G->capg * 2 : 1024;
        GInfo *ng = realloc(G->g, sizeof(GInfo) * (size_t)nc);
        if (!ng) return -1;
        G->g = ng; G->capg = nc;
    }
    if (G->npool + (size_t)a->n > G->cappool) {
        size_t nc = G->cappool ? G->cappool * 2 : 1 << 14;
        while (nc < G->npool + (size_t)a->n) nc *= 2;
        Ent *np = realloc(G->pool, sizeof(Ent) * nc);
        if (!np) return -1;
        G->pool = np; G->cappool = nc;
    }
    GInfo *gi = &G->g[G->ng];
    gi->off = (uint32_t)G->npool; gi->n = (uint16_t)a->n;
    gi->total = a->total; gi->adist = a->adist; gi->minc = a->minc; gi->maxc = a->maxc;
    gi->sx = a->sx; gi->sy = a->sy; gi->hash = a->hash; gi->shape = a->shape;
    memcpy(G->pool + G->npool, a->e, sizeof(Ent) * (size_t)a->n);
    G->npool += (size_t)a->n;
    G->tab[k] = G->ng + 1;
    return G->ng++;
}

/* ------------------------------------------------------------------ pairs, plans, states */

typedef struct {
    double cost;
    int32_t tie;                  /* with cost, the pair's place in its list */
    int32_t low[3];
    int8_t op, upper, nlow;       /* upper: index into the bag */
    int8_t tx, ty;                /* the shift of movx/mov2x/addx/add2x/subx/sub2x */
} Pair;

typedef struct PlanNode {
    struct PlanNode *parent;
    int refc, depth;
    int8_t op, nlow, tx, ty;
    int32_t upper;                /* Goal id */
    int32_t low[3];
} PlanNode;

typedef struct State {
    PlanNode *plan;
    Pair *chunk;                  /* the next children, or NULL (made again when needed) */
    double last_cost;             /* key of the last child taken */
    int32_t last_tie;
    int16_t depth;
    int8_t nb;
    int8_t gen;                   /* 0: not expanded; 1: exhaustive list; 2: Atom-distance list */
    int8_t started, nchunk, ichunk;
    int8_t more;                  /* the list goes on past the chunk */
    int32_t bag[MAXB];
} State;

typedef struct { State **buf; int cap, head, n; } Deque;

typedef struct {
    int steps;
    double found_at;
    long nodes;
    int32_t *data; int ndata;     /* encoded steps (see cp_plan) */
} Found;

typedef struct { uint64_t key; int32_t depth; } CacheEnt;   /* key 0: empty; a 64-bit hash of the sorted bag */

typedef struct {
    Goals G;
    int d, regs, flags, threshold, workers;
    int initial_id;
    long final_sum;
    int initial_atoms;
    int max_depth, best;
    long nodes;
    Deque dq[MAXW];
    int next[MAXW];
    CacheEnt *cache; size_t cache_cap, cache_n;
    Found *found; int nfound, capfound;
    size_t mem_limit;
    long live_states, live_plans, chunk_pairs;
    int exhausted;
    /* generation scratch */
    int gen_kind;
    int gnb;                       /* Goals in the bag being expanded (their views in gv) */
    TG *gv;                        /* views of the bag's Goals */
    int64_t seq;
    double after_cost; int32_t after_tie; int after_set;
    Pair *heap; TG (*heap_low)[3]; int hslot[CHUNK]; int nheap;  /* bounded max-heap of the CHUNK smallest keys */
    int sub_rel[MAXB][MAXB];      /* sub_rel[i][j]: bag Goal j holds bag Goal i */
} Search;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void plan_decref(Search *S, PlanNode *p) {
    while (p && --p->refc == 0) {
        PlanNode *q = p->parent;
        free(p);
        S->live_plans--;
        p = q;
    }
}

static void state_free(Search *S, State *s) {
    if (!s) return;
    plan_decref(S, s->plan);
    if (s->chunk) { S->chunk_pairs -= CHUNK; free(s->chunk); }
    free(s);
    S->live_states--;
}

/* room for one more (the ring is unrolled into a buffer twice as large); 0 when out of memory */
static int dq_room(Deque *q) {
    if (q->n < q->cap) return 1;
    int nc = q->cap ? q->cap * 2 : 256;
    State **nb = malloc(sizeof(State *) * (size_t)nc);
    if (!nb) return 0;
    for (int i = 0; i < q->n; i++) nb[i] = q->buf[(q->head + i) % q->cap];
    free(q->buf);
    q->buf = nb; q->cap = nc; q->head = 0;
    return 1;
}

static int dq_push_front(Deque *q, State *s) {
    if (!dq_room(q)) return 0;
    q->head = (q->head + q->cap - 1) % q->cap;
    q->buf[q->head] = s;
    q->n++;
    return 1;
}

static int dq_push_back(Deque *q, State *s) {
    if (!dq_room(q)) return 0;
    q->buf[(q->head + q->n) % q->cap] = s;
    q->n++;
    return 1;
}

static State *dq_pop_front(Deque *q) {
    if (!q->n) return NULL;
    State *s = q->buf[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    return s;
}

static State *dq_pop_back(Deque *q) {
    if (!q->n) return NULL;
    q->n--;
    return q->buf[(q->head + q->n) % q->cap];
}

/* ------------------------------------------------------------------ bags */

static int gtotal(const Search *S, int id) { return S->G.g[id].total; }

/* GoalBag.add: before the first Goal with no more Atoms */
static void bag_add(const Search *S, int32_t *bag, int *nb, int id) {
    int t = gtotal(S, id), i = 0;
    while (i < *nb && gtotal(S, bag[i]) > t) i++;
    memmove(bag + i + 1, bag + i, sizeof(int32_t) * (size_t)(*nb - i));
    bag[i] = id;
    (*nb)++;
}

static void bag_del(int32_t *bag, int *nb, int i) {
    memmove(bag + i, bag + i + 1, sizeof(int32_t) * (size_t)(*nb - i - 1));
    (*nb)--;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* the best depth a bag was seen at: 1 when this visit is the first or strictly better (GoalsCache).
 * Bags are keyed by a 64-bit hash of their sorted Goal ids (a collision, about 1e-6 likely over a
 * run of ten million bags, would only cull one bag). */
static int cache_is_best(Search *S, const int32_t *bag, int nb, int depth) {
    int32_t ids[MAXB];
    memcpy(ids, bag, sizeof(int32_t) * (size_t)nb);
    qsort(ids, (size_t)nb, sizeof(int32_t), cmp_i32);
    uint64_t h = 0xabcdefULL + (uint64_t)nb;
    for (int i = 0; i < nb; i++) h = mix(h, (uint64_t)ids[i]);
    if (!h) h = 1;
    if ((S->cache_n + 1) * 10 > S->cache_cap * 7) {
        size_t nc = S->cache_cap ? S->cache_cap * 2 : 1 << 16;
        CacheEnt *t = calloc(nc, sizeof(CacheEnt));
        if (!t) return 1;
        for (size_t i = 0; i < S->cache_cap; i++) {
            if (!S->cache[i].key) continue;
            size_t k = S->cache[i].key & (nc - 1);
            while (t[k].key) k = (k + 1) & (nc - 1);
            t[k] = S->cache[i];
        }
        free(S->cache);
        S->cache = t; S->cache_cap = nc;
    }
    size_t k = h & (S->cache_cap - 1);
    while (S->cache[k].key) {
        CacheEnt *c = &S->cache[k];
        if (c->key == h) {
            if (c->depth <= depth) return 0;
            c->depth = depth;
            return 1;
        }
        k = (k + 1) & (S->cache_cap - 1);
    }
    S->cache[k].key = h; S->cache[k].depth = depth;
    S->cache_n++;
    return 1;
}

/* ------------------------------------------------------------------ registers */

static int pub_extra(int op) {
    switch (op) {
    case OP_SUB: case OP_SUBX: case OP_SUB2X: case OP_NEG: case OP_DIVQ: return 1;
    case OP_DIVC: return 2;
    case OP_DIV: return 3;
    default: return 0;
    }
}

static int is_sub(int op) { return op == OP_SUB || op == OP_SUBX || op == OP_SUB2X; }

/* The engine's count (core.cain.pairgen.extra_registers): the output reuses a dying operand's
 * register when the macro allows it, else needs one of its own. `dead[i]`: lower i is not live. */
static int our_extra(int op, int nlow, const int *dead, int same_operands) {
    if (same_operands) return 1;
    switch (op) {
    case OP_MOV: case OP_MOVX: case OP_MOV2X: case OP_SUB: case OP_SUBX: case OP_SUB2X:
        return dead[0] ? 0 : 1;
    case OP_ADD2: case OP_ADD3: case OP_ADDX: case OP_ADD2X:
        for (int i = 0; i < nlow; i++) if (dead[i]) return 0;
        return 1;
    default: return 1;
    }
}

/* ------------------------------------------------------------------ the Pattern heuristic */

typedef struct { const Ent *e; int n; int total, adist, minc, maxc; uint64_t hash, shape; } View;

static View view_tg(const TG *t) {
    View v = {t->e, t->n, t->total, t->adist, t->minc, t->maxc, t->hash, t->shape};
    return v;
}

/* cost of a pair: -1 when the proposed bag does not fit the registers */
static double heuristic(Search *S, const Pair *p, TG *const *lows) {
    View pv[MAXB + 3];
    int isbag[MAXB + 3];            /* index into the bag, or -1 for a lower */
    int np = 0;
    int used[MAXB] = {0};
    used[(int)p->upper] = 1;
    /* (bag - upper) - lowers + lowers: a lower takes the place of one equal Goal */
    for (int l = 0; l < p->nlow; l++) {
        for (int i = 0; i < S->gnb; i++) {
            if (used[i]) continue;
            if (tg_same(&S->gv[i], lows[l])) { used[i] = 1; break; }
        }
    }
    for (int i = 0; i < S->gnb; i++) if (!used[i]) { pv[np] = view_tg(&S->gv[i]); isbag[np++] = i; }
    for (int l = 0; l < p->nlow; l++) { pv[np] = view_tg(lows[l]); isbag[np++] = -1; }
    if (np + pub_extra(p->op) > S->regs) return -1;
    double cost = 0;
    for (int i = 0; i < np; i++) {
        int subset = 0;
        for (int j = 0; j < np && subset <= 1; j++) {
            int holds;
            if (i == j) holds = 1;
            else if (isbag[i] >= 0 && isbag[j] >= 0) holds = S->sub_rel[isbag[i]][isbag[j]];
            else holds = pv[j].total >= pv[i].total && has_sub(pv[j].e, pv[j].n, pv[i].e, pv[i].n);
            if (holds) subset++;
        }
        cost += pv[i].total;
        cost += (double)pv[i].adist / subset;
    }
    int mn = 1 << 30, mx = 0;
    for (int i = 0; i < np; i++) {
        int first = 1;
        for (int j = 0; j < i; j++) if (pv[j].shape == pv[i].shape && pv[j].total == pv[i].total) { first = 0; break; }
        if (!first) continue;
        if (pv[i].n > 1) cost += (double)pv[i].total * (double)pv[i].total;
        if (mn > 1 && pv[i].minc < mn) mn = pv[i].minc;
        if (pv[i].maxc > mx) mx = pv[i].maxc;
    }
    if (mn == 1 << 30) mn = 0x7fffffff;
    cost += (double)((1 << S->d) / (mn > 0 ? mn : 1));
    cost += (double)(mx / (1 << S->d));
    if (p->op == OP_MOV) cost *= 2;
    return cost;
}

/* ------------------------------------------------------------------ candidate selection */

static int key_less(double c1, int32_t t1, double c2, int32_t t2) {
    return c1 < c2 || (c1 == c2 && t1 < t2);
}

/* the heap holds slot numbers; a slot keeps its pair and lowers, so sifting moves ints only */
static int heap_gt(const Search *S, int i, int j) {
    const Pair *a = &S->heap[S->hslot[i]], *b = &S->heap[S->hslot[j]];
    return key_less(b->cost, b->tie, a->cost, a->tie);
}

static void heap_swap(Search *S, int i, int j) { int t = S->hslot[i]; S->hslot[i] = S->hslot[j]; S->hslot[j] = t; }

static void heap_up(Search *S, int i) {
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!heap_gt(S, i, p)) break;
        heap_swap(S, i, p);
        i = p;
    }
}

static void heap_down(Search *S, int i) {
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < S->nheap && heap_gt(S, l, m)) m = l;
        if (r < S->nheap && heap_gt(S, r, m)) m = r;
        if (m == i) break;
        heap_swap(S, i, m);
        i = m;
    }
}

static void tg_copy(TG *o, const TG *a) {
    memcpy(o, a, offsetof(TG, e) + sizeof(Ent) * (size_t)a->n);
}

static long g_total_more;   /* candidates past the current chunk (set by consider) */

/* One candidate in generation order: cost it, and keep it if it is among the CHUNK smallest
 * keys after the last one taken. Keys: (cost, tie), tie = generation order for the exhaustive
 * list (a stable ascending sort) and its reverse for the Atom-distance list (a stable descending
 * sort read from the end). */
static void consider(Search *S, int op, int upper, int nlow, TG *const *lows, int tx, int ty) {
    int64_t seq = S->seq++;
    for (int l = 0; l < nlow; l++) if (lows[l]->n == 0) return;
    Pair p;
    p.op = (int8_t)op; p.upper = (int8_t)upper; p.nlow = (int8_t)nlow; p.tx = (int8_t)tx; p.ty = (int8_t)ty;
    double cost = heuristic(S, &p, lows);
    if (cost < 0) return;
    int32_t tie = (int32_t)(S->gen_kind == 1 ? seq : -seq);
    if (S->after_set && !key_less(S->after_cost, S->after_tie, cost, tie)) return;
    g_total_more++;
    p.cost = cost; p.tie = tie;
    int slot, replace_root = S->nheap == CHUNK;
    if (replace_root) {
        slot = S->hslot[0];
        if (!key_less(cost, tie, S->heap[slot].cost, S->heap[slot].tie)) return;
    } else {
        slot = S->nheap;
        S->hslot[S->nheap++] = slot;
    }
    S->heap[slot] = p;
    for (int l = 0; l < nlow; l++) tg_copy(&S->heap_low[slot][l], lows[l]);
    if (replace_root) heap_down(S, 0);
    else heap_up(S, S->nheap - 1);
}

static void c1(Search *S, int op, int up, const TG *a, int tx, int ty) {
    TG *l[1] = {(TG *)a};
    consider(S, op, up, 1, l, tx, ty);
}

static void c2(Search *S, int op, int up, const TG *a, const TG *b, int tx, int ty) {
    TG *l[2] = {(TG *)a, (TG *)b};
    consider(S, op, up, 2, l, tx, ty);
}

static void c3(Search *S, int op, int up, const TG *a, const TG *b, const TG *c) {
    TG *l[3] = {(TG *)a, (TG *)b, (TG *)c};
    consider(S, op, up, 3, l, 0, 0);
}

/* Dir: North (0,1), East (1,0), South (0,-1), West (-1,0); cw = next */
static const int DX[4] = {0, 1, 0, -1}, DY[4] = {1, 0, -1, 0};

/* ------------------------------------------------------------------ the exhaustive generator */

/* every split of g (ArrayGoal.allSplits order): out[k] is the count vector of split k */
static int all_splits(const TG *g, int16_t *out, int cap) {
    int n = g->n, m = 1;
    memset(out, 0, sizeof(int16_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        int c = g->e[i].c, inc = c > 0 ? 1 : -1, len = m;
        for (int k = inc; k != c + inc; k += inc) {
            for (int j = 0; j < len; j++) {
                if (m >= cap) return -1;
                memcpy(out + (size_t)m * n, out + (size_t)j * n, sizeof(int16_t) * (size_t)n);
                out[(size_t)m * n + i] = (int16_t)k;
                m++;
            }
        }
    }
    return m;
}

static void split_goal(const TG *g, const int16_t *v, TG *o) {
    int n = 0;
    for (int i = 0; i < g->n; i++) if (v[i]) { o->e[n].pos = g->e[i].pos; o->e[n].c = v[i]; n++; }
    o->n = n;
    tg_finish(o);
}

/* a small set of Goals seen (by value) */
typedef struct { uint64_t *h; int n, cap; } Seen;

static int seen_has(const Seen *s, const TG *g) {
    for (int i = 0; i < s->n; i++) if (s->h[i] == g->hash) return 1;
    return 0;
}

static void seen_add(Seen *s, const TG *g) {
    if (s->n == s->cap) { s->cap = s->cap ? s->cap * 2 : 64; s->h = realloc(s->h, sizeof(uint64_t) * (size_t)s->cap); }
    s->h[s->n++] = g->hash;
}

#define MAXSPLIT 4096

static void gen_exhaustive(Search *S, int up) {
    const TG *g = &S->gv[up];
    int fl = S->flags;
    static int16_t splits[MAXSPLIT * 64], sub[MAXSPLIT * 64];
    TG a, b, nb, t1, t2, aa, ab;
    /* n-ary */
    if (g->n <= 64) {
        int ns = all_splits(g, splits, MAXSPLIT);
        if (ns > 0) {
            int normal = ns - 1;
            TG p1, p2;
            int extra = 0;
            if (fl & F_POW2) {
                int n1 = 0, n2 = 0, any = 0;
                for (int i = 0; i < g->n; i++) {
                    int c = g->e[i].c, a_ = c < 0 ? -c : c, pos = c > 0;
                    int lo = 0, hi = 0;
                    if (a_ == 7) { lo = pos ? -1 : 1; hi = pos ? 8 : -8; any = 1; }
                    else if (a_ == 14) { lo = pos ? -2 : 2; hi = pos ? 16 : -16; any = 1; }
                    else if (a_ == 15) { lo = pos ? -1 : 1; hi = pos ? 16 : -16; any = 1; }
                    else lo = c;
                    if (lo) { p1.e[n1].pos = g->e[i].pos; p1.e[n1].c = (int16_t)lo; n1++; }
                    if (hi) { p2.e[n2].pos = g->e[i].pos; p2.e[n2].c = (int16_t)hi; n2++; }
                }
                p1.n = n1; p2.n = n2;
                tg_finish(&p1); tg_finish(&p2);
                if (any) extra = 2;
            }
            Seen seen = {0}, subseen = {0};
            for (int i = 0; i < normal + extra; i++) {
                if (i < normal) split_goal(g, splits + (size_t)(i + 1) * g->n, &a);
                else a = i == normal ? p1 : p2;
                int skip2 = seen_has(&seen, &a);
                if (i < normal) tg_without(g, &a, &b);
                else if (!tg_addsub(g, &a, -1, &b)) continue;
                seen_add(&seen, &b);
                if (a.n == 0 || b.n == 0) continue;
                if (!skip2) {
                    if (fl & F_ADD) c2(S, OP_ADD2, up, &a, &b, 0, 0);
                    if (fl & F_ADDX)
                        for (int dI = 0; dI < 4; dI++)
                            if (tg_tr(&a, -DX[dI], -DY[dI], &t1) && tg_tr(&b, -DX[dI], -DY[dI], &t2))
                                c2(S, OP_ADDX, up, &t1, &t2, DX[dI], DY[dI]);
                    if (fl & F_ADD2X)
                        for (int dI = 0; dI < 4; dI++) {
                            int cw = (dI + 1) & 3;
                            int tx = 2 * DX[dI], ty = 2 * DY[dI];
                            if (tg_tr(&a, -tx, -ty, &t1) && tg_tr(&b, -tx, -ty, &t2)) c2(S, OP_ADD2X, up, &t1, &t2, tx, ty);
                            tx = DX[dI] + DX[cw]; ty = DY[dI] + DY[cw];
                            if (tg_tr(&a, -tx, -ty, &t1) && tg_tr(&b, -tx, -ty, &t2)) c2(S, OP_ADD2X, up, &t1, &t2, tx, ty);
                        }
                }
                tg_neg(&b, &nb);
                if (fl & F_SUB) c2(S, OP_SUB, up, &a, &nb, 0, 0);
                if (fl & F_SUBX)
                    for (int dI = 0; dI < 4; dI++)
                        if (tg_tr(&a, -DX[dI], -DY[dI], &t1)) c2(S, OP_SUBX, up, &t1, &nb, DX[dI], DY[dI]);
                if (fl & F_SUB2X)
                    for (int dI = 0; dI < 4; dI++) {
                        int cw = (dI + 1) & 3;
                        int tx = 2 * DX[dI], ty = 2 * DY[dI];
                        if (tg_tr(&a, -tx, -ty, &t1)) c2(S, OP_SUB2X, up, &t1, &nb, tx, ty);
                        tx = DX[dI] + DX[cw]; ty = DY[dI] + DY[cw];
                        if (tg_tr(&a, -tx, -ty, &t1)) c2(S, OP_SUB2X, up, &t1, &nb, tx, ty);
                    }
                if ((fl & F_ADD3) && a.n <= 64) {
                    subseen.n = 0;
                    int nsub = all_splits(&a, sub, MAXSPLIT);
                    for (int k = 0; k < nsub; k++) {
                        split_goal(&a, sub + (size_t)k * a.n, &aa);
                        int skip3 = seen_has(&subseen, &aa);
                        tg_without(&a, &aa, &ab);
                        seen_add(&subseen, &ab);
                        if (aa.n == 0 || ab.n == 0) continue;
                        if (!skip3) c3(S, OP_ADD3, up, &aa, &ab, &b);
                    }
                }
            }
            free(seen.h); free(subseen.h);
        }
    }
    /* unary */
    if (fl & F_NEG) { tg_neg(g, &t1); c1(S, OP_NEG, up, &t1, 0, 0); }
    if (fl & (F_DIV3 | F_DIV4 | F_DIVQ)) {
        if (tg_addsub(g, g, 1, &t1)) {
            if (fl & F_DIV3) c1(S, OP_DIVC, up, &t1, 0, 0);
            if (fl & F_DIV4) c1(S, OP_DIV, up, &t1, 0, 0);
            if (fl & F_DIVQ) c1(S, OP_DIVQ, up, &t1, 0, 0);
        }
    }
    if (fl & F_MOV) c1(S, OP_MOV, up, g, 0, 0);
    if (fl & F_MOVX)
        for (int dI = 0; dI < 4; dI++)
            if (tg_tr(g, -DX[dI], -DY[dI], &t1)) c1(S, OP_MOVX, up, &t1, DX[dI], DY[dI]);
    if (fl & F_MOV2X)
        for (int dI = 0; dI < 4; dI++) {
            int cw = (dI + 1) & 3;
            int tx = 2 * DX[dI], ty = 2 * DY[dI];
            if (tg_tr(g, -tx, -ty, &t1)) c1(S, OP_MOV2X, up, &t1, tx, ty);
            tx = DX[dI] + DX[cw]; ty = DY[dI] + DY[cw];
            if (tg_tr(g, -tx, -ty, &t1)) c1(S, OP_MOV2X, up, &t1, tx, ty);
        }
}

/* ------------------------------------------------------------------ the Atom-distance generator */

/* Distance.majorXYDirection as a unit step (ties go to x); 0 at the origin */
static int major(int x, int y, int *ux, int *uy) {
    if (!x && !y) return 0;
    int ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
    if (ax >= ay) { *ux = x > 0 ? 1 : -1; *uy = 0; }
    else { *ux = 0; *uy = y > 0 ? 1 : -1; }
    return 1;
}

static int iabs(int v) { return v < 0 ? -v : v; }

/* Math.round of the signed mean position */
static void centre(const TG *a, int *cx, int *cy) {
    *cx = (int)floor((double)a->sx / a->total + 0.5);
    *cy = (int)floor((double)a->sy / a->total + 0.5);
}

typedef struct { int neg, dx, dy; TG to; } Item;

static int item_cmp(const void *p, const void *q) {
    const Item *a = p, *b = q;
    if (a->neg != b->neg) return a->neg - b->neg;
    if (a->dx != b->dx) return a->dx - b->dx;
    return a->dy - b->dy;
}

/* getAtomDistanceList2D: for every distance from an Atom of a to an Atom of b and sign relation,
 * the part of b reached (min of the counts, halved at distance zero on the diagonal), ordered by
 * (sign relation, dx, dy); off the diagonal only the distances that reach all of b */
static int atom_distance_list(const TG *a, const TG *b, int diagonal, Item **out, int *cap) {
    int ni = 0;
    if (!diagonal) {
        /* candidate distances: b's first Atom from each Atom of a */
        for (int i = 0; i < a->n; i++) {
            int dx = ex(b->e[0].pos) - ex(a->e[i].pos), dy = ey(b->e[0].pos) - ey(a->e[i].pos);
            int ca = a->e[i].c, cb = b->e[0].c;
            int neg = (ca > 0) != (cb > 0);
            int ok = 1;
            for (int j = 0; j < b->n && ok; j++) {
                int x = ex(b->e[j].pos) - dx, y = ey(b->e[j].pos) - dy, c = 0;
                if (x > -OFF && x < OFF && y > -OFF && y < OFF) {
                    uint16_t pos = (uint16_t)((x + OFF) * SPAN + (y + OFF));
                    for (int k = 0; k < a->n; k++) if (a->e[k].pos == pos) { c = a->e[k].c; break; }
                }
                if (!c || ((c > 0) != (b->e[j].c > 0)) != neg || iabs(c) < iabs(b->e[j].c)) ok = 0;
            }
            if (!ok) continue;
            if (ni == *cap) { *cap = *cap ? *cap * 2 : 64; *out = realloc(*out, sizeof(Item) * (size_t)*cap); }
            Item *it = &(*out)[ni++];
            it->neg = neg; it->dx = dx; it->dy = dy; it->to = *b;
        }
    } else {
        for (int i = 0; i < a->n; i++) {
            for (int j = 0; j < b->n; j++) {
                int dx = ex(b->e[j].pos) - ex(a->e[i].pos), dy = ey(b->e[j].pos) - ey(a->e[i].pos);
                int ca = a->e[i].c, cb = b->e[j].c;
                int neg = (ca > 0) != (cb > 0);
                int cnt = iabs(ca) < iabs(cb) ? iabs(ca) : iabs(cb);
                if (!dx && !dy) cnt /= 2;
                if (!cnt) continue;
                int k;
                for (k = 0; k < ni; k++) if ((*out)[k].neg == neg && (*out)[k].dx == dx && (*out)[k].dy == dy) break;
                if (k == ni) {
                    if (ni == *cap) { *cap = *cap ? *cap * 2 : 64; *out = realloc(*out, sizeof(Item) * (size_t)*cap); }
                    Item *it = &(*out)[ni++];
                    it->neg = neg; it->dx = dx; it->dy = dy; it->to.n = 0;
                }
                TG *to = &(*out)[k].to;
                to->e[to->n].pos = b->e[j].pos;
                to->e[to->n].c = (int16_t)(cb > 0 ? cnt : -cnt);
                to->n++;
            }
        }
        for (int k = 0; k < ni; k++) {
            TG *to = &(*out)[k].to;
            /* positions of b were visited in order for each Atom of a: sort them */
            for (int x = 1; x < to->n; x++) {
                Ent v = to->e[x];
                int y = x - 1;
                while (y >= 0 && to->e[y].pos > v.pos) { to->e[y + 1] = to->e[y]; y--; }
                to->e[y + 1] = v;
            }
            tg_finish(to);
        }
    }
    qsort(*out, (size_t)ni, sizeof(Item), item_cmp);
    return ni;
}

static void ad_pairs(Search *S, int up, const Item *it) {
    const TG *a = &S->gv[up];
    int fl = S->flags;
    TG tmp, aw, t1, t2;
    int dx = it->dx, dy = it->dy, man = iabs(dx) + iabs(dy);
    if (!tg_tr(&it->to, -dx, -dy, &tmp)) return;
    if (it->neg) { TG n_; tg_neg(&tmp, &n_); tmp = n_; }
    int u1x = 0, u1y = 0, u2x = 0, u2y = 0, has2 = 0;
    major(dx, dy, &u1x, &u1y);
    if (man > 1) has2 = major(dx - u1x, dy - u1y, &u2x, &u2y);
    if (tg_same(&tmp, a)) {
        /* dir1 = opposite of the major direction: the lower is a moved towards b */
        if ((fl & F_MOV2X) && man > 1 && has2) {
            if (tg_tr(a, u1x + u2x, u1y + u2y, &t1)) c1(S, OP_MOV2X, up, &t1, -(u1x + u2x), -(u1y + u2y));
        }
        if ((fl & F_MOVX) && man > 0) {
            if (tg_tr(a, u1x, u1y, &t1)) c1(S, OP_MOVX, up, &t1, -u1x, -u1y);
        } else if ((fl & F_NEG) && it->neg) {
            c1(S, OP_NEG, up, &it->to, 0, 0);
        }
        return;
    }
    tg_without(a, &tmp, &aw);
    if (fl & F_ADD) c2(S, OP_ADD2, up, &tmp, &aw, 0, 0);
    if (fl & F_SUB) { tg_neg(&aw, &t2); c2(S, OP_SUB, up, &tmp, &t2, 0, 0); }
    if ((fl & F_ADDX) && man > 0)
        if (tg_tr(&aw, u1x, u1y, &t1) && tg_tr(&tmp, u1x, u1y, &t2)) c2(S, OP_ADDX, up, &t1, &t2, -u1x, -u1y);
    if ((fl & F_ADD2X) && man > 1 && has2)
        if (tg_tr(&aw, u1x + u2x, u1y + u2y, &t1) && tg_tr(&tmp, u1x + u2x, u1y + u2y, &t2))
            c2(S, OP_ADD2X, up, &t1, &t2, -(u1x + u2x), -(u1y + u2y));
    if ((fl & F_SUBX) && man > 0)
        if (tg_tr(&tmp, u1x, u1y, &t1)) { tg_neg(&aw, &t2); c2(S, OP_SUBX, up, &t1, &t2, -u1x, -u1y); }
    if ((fl & F_SUB2X) && man > 1 && has2)
        if (tg_tr(&tmp, u1x + u2x, u1y + u2y, &t1)) {
            tg_neg(&aw, &t2);
            c2(S, OP_SUB2X, up, &t1, &t2, -(u1x + u2x), -(u1y + u2y));
        }
}

static void ad_diagonal_pairs(Search *S, int up, const Item *it) {
    const TG *a = &S->gv[up];
    int fl = S->flags;
    TG aw, t1, t2, tmp, s1, chk;
    int cx, cy;
    centre(a, &cx, &cy);
    int dx = it->dx, dy = it->dy, man = iabs(dx) + iabs(dy), cman = iabs(cx) + iabs(cy);
    tg_without(a, &it->to, &aw);
    if (!it->neg) { if (fl & F_ADD) c2(S, OP_ADD2, up, &aw, &it->to, 0, 0); }
    else if (fl & F_SUB) { tg_neg(&it->to, &t2); c2(S, OP_SUB, up, &aw, &t2, 0, 0); }
    if (fl & F_ADD3) {
        if (tg_tr(&it->to, -dx, -dy, &t1)) {
            if (it->neg) { tg_neg(&t1, &t2); t1 = t2; }
            tg_without(&t1, &it->to, &tmp);
            tg_without(&aw, &tmp, &s1);
            if (s1.n && tmp.n && tg_addsub(&s1, &tmp, 1, &t1) && tg_addsub(&t1, &it->to, 1, &chk) && tg_same(&chk, a))
                c3(S, OP_ADD3, up, &s1, &tmp, &it->to);
        }
    }
    int u1x = 0, u1y = 0, u2x = 0, u2y = 0;
    if ((fl & F_ADDX) && cman > 0) {
        major(cx, cy, &u1x, &u1y);
        if (tg_tr(&aw, -u1x, -u1y, &t1) && tg_tr(&it->to, -u1x, -u1y, &t2)) c2(S, OP_ADDX, up, &t1, &t2, u1x, u1y);
    }
    if ((fl & F_ADD2X) && cman > 1) {
        major(cx, cy, &u1x, &u1y);
        if (major(cx - u1x, cy - u1y, &u2x, &u2y)) {
            int tx = u1x + u2x, ty = u1y + u2y;
            if (tg_tr(&aw, -tx, -ty, &t1) && tg_tr(&it->to, -tx, -ty, &t2)) c2(S, OP_ADD2X, up, &t1, &t2, tx, ty);
        }
    }
    if ((fl & F_SUBX) && man > 0) {
        major(dx, dy, &u1x, &u1y);
        if (tg_tr(&aw, u1x, u1y, &t1)) { tg_neg(&it->to, &t2); c2(S, OP_SUBX, up, &t1, &t2, -u1x, -u1y); }
    }
    if ((fl & F_SUB2X) && man > 1) {
        major(dx, dy, &u1x, &u1y);
        if (major(dx - u1x, dy - u1y, &u2x, &u2y)) {
            int tx = u1x + u2x, ty = u1y + u2y;
            if (tg_tr(&aw, tx, ty, &t1)) { tg_neg(&it->to, &t2); c2(S, OP_SUB2X, up, &t1, &t2, -tx, -ty); }
        }
    }
}

static void ad_direct(Search *S, int up) {
    const TG *a = &S->gv[up];
    int fl = S->flags;
    TG t1;
    int cx, cy, u1x, u1y, u2x, u2y;
    centre(a, &cx, &cy);
    int cman = iabs(cx) + iabs(cy);
    if ((fl & F_MOVX) && cman > 0 && major(cx, cy, &u1x, &u1y))
        if (tg_tr(a, -u1x, -u1y, &t1)) c1(S, OP_MOVX, up, &t1, u1x, u1y);
    if ((fl & F_MOV2X) && cman > 1 && major(cx, cy, &u1x, &u1y) && major(cx - u1x, cy - u1y, &u2x, &u2y)) {
        /* dir1, dir2 are the opposites of the major steps: the lower moves away from the centre */
        int tx = -(u1x + u2x), ty = -(u1y + u2y);
        if (tg_tr(a, -tx, -ty, &t1)) c1(S, OP_MOV2X, up, &t1, tx, ty);
    }
    if (fl & F_DIVQ) {
        TG init;
        g_view(&S->G, S->initial_id, &init);
        if (has_sub(init.e, init.n, a->e, a->n) && tg_addsub(a, a, 1, &t1)) c1(S, OP_DIVQ, up, &t1, 0, 0);
    }
}

static Item *ad_items; static int ad_cap;

static void gen_atom_distance(Search *S) {
    int n = S->gnb;
    for (int jj = 0; jj < n; jj++)
        for (int ii = 0; ii < n; ii++) {
            int diag = ii == jj;
            int ni = atom_distance_list(&S->gv[ii], &S->gv[jj], diag, &ad_items, &ad_cap);
            if (diag) ad_direct(S, ii);
            for (int k = 0; k < ni; k++) {
                if (ad_items[k].to.total == 0) continue;
                if (diag) ad_diagonal_pairs(S, ii, &ad_items[k]);
                else ad_pairs(S, ii, &ad_items[k]);
            }
        }
}

/* ------------------------------------------------------------------ the next chunk of a node's list */

static int fill_chunk(Search *S, State *s) {
    S->gnb = s->nb;
    for (int i = 0; i < s->nb; i++) g_view(&S->G, s->bag[i], &S->gv[i]);
    for (int i = 0; i < s->nb; i++)
        for (int j = 0; j < s->nb; j++)
            S->sub_rel[i][j] = i == j || (S->gv[j].total >= S->gv[i].total &&
                                          has_sub(S->gv[j].e, S->gv[j].n, S->gv[i].e, S->gv[i].n));
    S->gen_kind = s->gen;
    S->seq = 0;
    S->nheap = 0;
    S->after_set = s->started;
    S->after_cost = s->last_cost; S->after_tie = s->last_tie;
    g_total_more = 0;
    if (s->gen == 1) for (int up = 0; up < s->nb; up++) gen_exhaustive(S, up);
    else gen_atom_distance(S);
    /* ascending keys */
    int m = S->nheap;
    if (!s->chunk) { s->chunk = malloc(sizeof(Pair) * CHUNK); S->chunk_pairs += CHUNK; }
    for (int k = m - 1; k >= 0; k--) {
        int slot = S->hslot[0];
        Pair p = S->heap[slot];
        for (int l = 0; l < p.nlow; l++) {
            int id = g_intern(&S->G, &S->heap_low[slot][l]);
            if (id < 0) return 0;
            p.low[l] = id;
        }
        s->chunk[k] = p;
        S->nheap--;
        if (S->nheap) { heap_swap(S, 0, S->nheap); heap_down(S, 0); }
    }
    s->nchunk = (int8_t)m; s->ichunk = 0;
    s->more = g_total_more > m;
    return 1;
}

/* ------------------------------------------------------------------ plans */

static void record_plan(Search *S, PlanNode *p, const PlanNode *direct, int ndirect) {
    int steps = (p ? p->depth : 0) + ndirect;
    if (steps >= S->best) return;
    S->best = steps;
    if (S->nfound == S->capfound) {
        S->capfound = S->capfound ? S->capfound * 2 : 16;
        S->found = realloc(S->found, sizeof(Found) * (size_t)S->capfound);
    }
    Found *f = &S->found[S->nfound++];
    f->steps = steps; f->found_at = now_s(); f->nodes = S->nodes;
    /* reverse steps from the Final-Goals: the chain from the root, then the direct ones */
    const PlanNode *chain[4096];
    int nc = 0;
    for (const PlanNode *q = p; q; q = q->parent) if (nc < 4096) chain[nc++] = q;
    int cap = 16, nd = 0;
    int32_t *data = malloc(sizeof(int32_t) * (size_t)cap);
#define PUT(v) do { if (nd == cap) { cap *= 2; data = realloc(data, sizeof(int32_t) * (size_t)cap); } data[nd++] = (v); } while (0)
    for (int k = 0; k < nc + ndirect; k++) {
        const PlanNode *q = k < nc ? chain[nc - 1 - k] : &direct[k - nc];
        PUT(q->op); PUT(q->tx); PUT(q->ty); PUT(q->upper); PUT(q->nlow);
        for (int l = 0; l < q->nlow; l++) PUT(q->low[l]);
    }
#undef PUT
    f->data = data; f->ndata = nd;
    if (steps - 1 < S->max_depth) S->max_depth = steps - 1;
}

/* Scamp5AnalogueDirectSolver for one Goal and one input: a negation, a halving chain at the
 * centre, or a move of the input; 1 when a plan was recorded */
static int direct_solve(Search *S, State *s) {
    if (s->nb > 1) return 0;
    if (s->nb == 0 || s->bag[0] == S->initial_id) {
        record_plan(S, s->plan, NULL, 0);
        return 1;
    }
    int gid = s->bag[0];
    TG g, t, init;
    g_view(&S->G, gid, &g);
    g_view(&S->G, S->initial_id, &init);
    PlanNode steps[64];
    int n = 0;
    int fl = S->flags;
    if (fl & F_NEG) {
        tg_neg(&g, &t);
        if (tg_same(&t, &init)) {
            steps[0].op = OP_NEG; steps[0].upper = gid; steps[0].nlow = 1; steps[0].low[0] = S->initial_id;
            steps[0].tx = steps[0].ty = 0;
            n = 1;
        }
    }
    if (!n && (fl & (F_DIV3 | F_DIV4 | F_DIVQ)) && g.n == 1 && g.e[0].pos == OFF * SPAN + OFF) {
        int op = (fl & (F_DIV3 | F_DIV4)) ? ((fl & F_DIV3) ? OP_DIVC : OP_DIV) : OP_DIVQ;
        TG cur = g;
        int curid = gid;
        for (;;) {
            if (!tg_addsub(&cur, &cur, 1, &t) || n >= 63) { n = 0; break; }
            int lid = g_intern(&S->G, &t);
            if (lid < 0) return 0;
            steps[n].op = (int8_t)op; steps[n].upper = curid; steps[n].nlow = 1; steps[n].low[0] = lid;
            steps[n].tx = steps[n].ty = 0;
            n++;
            cur = t; curid = lid;
            if (cur.total >= init.total) break;
        }
        if (n && curid != S->initial_id) n = 0;
    }
    if (!n && (fl & F_MOVX))
        for (int dI = 0; dI < 4 && !n; dI++)
            if (tg_tr(&g, -DX[dI], -DY[dI], &t) && tg_same(&t, &init)) {
                steps[0].op = OP_MOVX; steps[0].upper = gid; steps[0].nlow = 1; steps[0].low[0] = S->initial_id;
                steps[0].tx = (int8_t)DX[dI]; steps[0].ty = (int8_t)DY[dI];
                n = 1;
            }
    if (!n && (fl & F_MOV2X))
        for (int dI = 0; dI < 4 && !n; dI++)
            for (int k = 0; k < 2 && !n; k++) {
                int cw = (dI + k) & 3;
                int tx = DX[dI] + DX[cw], ty = DY[dI] + DY[cw];
                if (tg_tr(&g, -tx, -ty, &t) && tg_same(&t, &init)) {
                    steps[0].op = OP_MOV2X; steps[0].upper = gid; steps[0].nlow = 1; steps[0].low[0] = S->initial_id;
                    steps[0].tx = (int8_t)tx; steps[0].ty = (int8_t)ty;
                    n = 1;
                }
            }
    if (!n) return 0;
    /* registers: one Goal and the macro's extra ones */
    for (int k = 0; k < n; k++) {
        int dead[1] = {1};
        int e = pub_extra(steps[k].op), o = our_extra(steps[k].op, 1, dead, 0);
        if (1 + (e > o ? e : o) > S->regs) return 0;
    }
    record_plan(S, s->plan, steps, n);
    return 1;
}

/* ------------------------------------------------------------------ one step of a worker (iSearch) */

static State *new_state(Search *S) {
    State *s = calloc(1, sizeof(State));
    if (s) S->live_states++;
    return s;
}

static int search_step(Search *S, int w, State *s) {
    if (s->depth > S->max_depth || s->nb - ((S->max_depth - s->depth) + 1) > 1) { state_free(S, s); return 1; }
    if (!s->gen) {
        long sum = 0;
        for (int i = 0; i < s->nb; i++) sum += gtotal(S, s->bag[i]);
        if (sum >= 2 * S->final_sum + S->initial_atoms) { state_free(S, s); return 1; }
        if (!cache_is_best(S, s->bag, s->nb, s->depth)) { state_free(S, s); return 1; }
        if (direct_solve(S, s)) { state_free(S, s); return 1; }
        int mx = 0;
        for (int i = 0; i < s->nb; i++) if (gtotal(S, s->bag[i]) > mx) mx = gtotal(S, s->bag[i]);
        s->gen = (int8_t)(mx > S->threshold ? 2 : 1);
        if (!fill_chunk(S, s)) return 0;
        S->nodes++;
    } else if (s->ichunk >= s->nchunk && s->more) {
        if (!fill_chunk(S, s)) return 0;
    }
    if (s->ichunk >= s->nchunk) { state_free(S, s); return 1; }
    Pair p = s->chunk[s->ichunk++];
    s->started = 1; s->last_cost = p.cost; s->last_tie = p.tie;
    /* the child: the upper out, each lower merged with an equal Goal that stays (unless the
     * macro overwrites its input), then the lowers added in order */
    int32_t nb[MAXB + 3];
    int n = s->nb;
    memcpy(nb, s->bag, sizeof(int32_t) * (size_t)n);
    bag_del(nb, &n, p.upper);
    int32_t add[3];
    int nadd = 0, dead[3] = {0, 0, 0};
    int same_ops = is_sub(p.op) && p.nlow == 2 && p.low[0] == p.low[1];
    for (int l = 0; l < p.nlow; l++) {
        if (l == 1 && same_ops) { dead[l] = dead[0]; continue; }
        int reuse = -1;
        if (p.op != OP_DIVC)
            for (int j = 0; j < n; j++) if (nb[j] == p.low[l]) { reuse = j; break; }
        if (reuse >= 0) bag_del(nb, &n, reuse);
        else dead[l] = 1;
        add[nadd++] = p.low[l];
    }
    for (int k = 0; k < nadd; k++) {
        if (n >= MAXB) { n = MAXB + 1; break; }
        bag_add(S, nb, &n, add[k]);
    }
    State *child = NULL;
    int pe = pub_extra(p.op), oe = our_extra(p.op, p.nlow, dead, same_ops);
    if (n <= MAXB && n + (pe > oe ? pe : oe) <= S->regs) {
        child = new_state(S);
        PlanNode *pn = malloc(sizeof(PlanNode));
        if (!child || !pn) { free(pn); if (child) state_free(S, child); return 0; }
        pn->parent = s->plan; pn->refc = 1; pn->depth = s->depth + 1;
        if (s->plan) s->plan->refc++;
        pn->op = p.op; pn->nlow = p.nlow; pn->tx = p.tx; pn->ty = p.ty;
        pn->upper = s->bag[(int)p.upper];
        for (int l = 0; l < p.nlow; l++) pn->low[l] = p.low[l];
        child->depth = (int16_t)(s->depth + 1); child->nb = (int8_t)n;
        memcpy(child->bag, nb, sizeof(int32_t) * (size_t)n);
        child->plan = pn;
        S->live_plans++;
    }
    if (child && !dq_push_front(&S->dq[w], child)) return 0;
    if (!dq_push_back(&S->dq[w], s)) return 0;
    return 1;
}

/* ------------------------------------------------------------------ memory guard */

static size_t mem_used(const Search *S) {
    size_t m = sizeof(GInfo) * (size_t)S->G.capg + sizeof(Ent) * S->G.cappool + sizeof(int32_t) * S->G.tabcap;
    m += sizeof(CacheEnt) * S->cache_cap;
    m += (size_t)S->live_states * (sizeof(State) + 16) + (size_t)S->chunk_pairs * sizeof(Pair);
    m += (size_t)S->live_plans * (sizeof(PlanNode) + 16);
    return m;
}

/* Over the memory limit: first the waiting parents in the back half of every deque give up their
 * lists (made again when they are next taken), then the table of bags seen is forgotten, and only
 * then the older half of every deque (its oldest parents) is dropped. Freed memory goes back to
 * the system (glibc keeps it otherwise, and the process's size is what the limit is about). */
static void trim_steps(Search *S);

static void trim(Search *S) {
    trim_steps(S);
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static void trim_steps(Search *S) {
    for (int w = 0; w < S->workers; w++) {
        Deque *q = &S->dq[w];
        for (int i = q->n / 2; i < q->n; i++) {
            State *s = q->buf[(q->head + i) % q->cap];
            if (s->chunk) {
                free(s->chunk); s->chunk = NULL; S->chunk_pairs -= CHUNK;
                s->nchunk = s->ichunk = 0; s->more = 1;
            }
        }
    }
    if (mem_used(S) <= S->mem_limit * 3 / 4) return;
    free(S->cache);
    S->cache = NULL; S->cache_cap = 0; S->cache_n = 0;
    if (mem_used(S) <= S->mem_limit * 3 / 4) return;
    for (int w = 0; w < S->workers; w++) {
        Deque *q = &S->dq[w];
        int keep = q->n / 2;
        while (q->n > keep) state_free(S, dq_pop_back(q));
    }
}

/* ------------------------------------------------------------------ the interface */

typedef Search CpSearch;

/* finals: for each Final-Goal, lens[i] triples (x, y, coefficient) in flat[] */
CpSearch *cp_new(int nfinal, const int *lens, const int *flat, int d, int regs, int flags, int threshold,
                 int workers, int initial_max_depth, long mem_limit) {
    if (nfinal < 1 || nfinal > MAXB || regs > MAXB) return NULL;
    Search *S = calloc(1, sizeof(Search));
    if (!S) return NULL;
    S->d = d; S->regs = regs; S->flags = flags; S->threshold = threshold;
    S->workers = workers < 1 ? 1 : workers > MAXW ? MAXW : workers;
    S->max_depth = initial_max_depth; S->best = initial_max_depth + 1;
    S->mem_limit = (size_t)mem_limit;
    S->gv = malloc(sizeof(TG) * MAXB);
    S->heap = malloc(sizeof(Pair) * CHUNK);
    S->heap_low = malloc(sizeof(TG) * 3 * CHUNK);
    if (!S->gv || !S->heap || !S->heap_low) return NULL;
    TG t;
    t.n = 1; t.e[0].pos = OFF * SPAN + OFF; t.e[0].c = (int16_t)(1 << d);
    tg_finish(&t);
    S->initial_id = g_intern(&S->G, &t);
    S->initial_atoms = 1 << d;
    State *root = new_state(S);
    int k = 0;
    for (int i = 0; i < nfinal; i++) {
        t.n = 0;
        for (int j = 0; j < lens[i]; j++, k += 3) {
            int x = flat[k], y = flat[k + 1], c = flat[k + 2];
            if (!c) continue;
            t.e[t.n].pos = (uint16_t)((x + OFF) * SPAN + (y + OFF));
            t.e[t.n].c = (int16_t)c;
            t.n++;
        }
        for (int a = 1; a < t.n; a++) {
            Ent v = t.e[a];
            int b = a - 1;
            while (b >= 0 && t.e[b].pos > v.pos) { t.e[b + 1] = t.e[b]; b--; }
            t.e[b + 1] = v;
        }
        tg_finish(&t);
        S->final_sum += t.total;
        int id = g_intern(&S->G, &t), nb = root->nb;
        bag_add(S, root->bag, &nb, id);
        root->nb = (int8_t)nb;
    }
    for (int w = 0; w < S->workers; w++) S->next[w] = w == 0 ? S->workers - 1 : w - 1;
    dq_push_back(&S->dq[0], root);
    return S;
}

/* Run until `max_nodes` more Goal-Bags are expanded, the clock passes `deadline` (time.monotonic),
 * or the search space is exhausted. Returns 1 when exhausted, 0 otherwise, -1 out of memory. */
int cp_run(CpSearch *S, long max_nodes, double deadline) {
    long target = S->nodes + max_nodes;
    int since = 0;
    while (S->nodes < target) {
        int any = 0;
        for (int w = 0; w < S->workers; w++) {
            State *s = dq_pop_front(&S->dq[w]);
            if (!s && S->workers > 1) {
                int c = S->next[w];
                for (int k = 0; k < S->workers && !s; k++) { s = dq_pop_back(&S->dq[c]); c = S->next[c]; }
            }
            if (!s) continue;
            any = 1;
            if (!search_step(S, w, s)) return -1;
        }
        if (!any) { S->exhausted = 1; return 1; }
        if (now_s() >= deadline) break;
        if (++since >= 16) {
            since = 0;
            if (S->mem_limit && mem_used(S) > S->mem_limit) trim(S);
        }
    }
    return 0;
}

long cp_nodes(const CpSearch *S) { return S->nodes; }
int cp_plan_count(const CpSearch *S) { return S->nfound; }

/* Plan i: returns its step count, or -(words needed) when buf is too small. Layout: per reverse
 * step (Final-Goals first) op, tx, ty, upper Goal id, lower count, lower ids. */
int cp_plan(const CpSearch *S, int i, int *buf, int cap, double *found_at, long *nodes) {
    const Found *f = &S->found[i];
    if (f->ndata > cap) return -f->ndata;
    memcpy(buf, f->data, sizeof(int32_t) * (size_t)f->ndata);
    *found_at = f->found_at;
    *nodes = f->nodes;
    return f->steps;
}

int cp_plan_words(const CpSearch *S, int i) { return S->found[i].ndata; }

/* Goal id as (x, y, coefficient) triples; returns the number of positions */
int cp_goal(const CpSearch *S, int id, int *buf, int cap) {
    const GInfo *gi = &S->G.g[id];
    if (gi->n * 3 > cap) return -gi->n;
    const Ent *e = gent(&S->G, id);
    for (int i = 0; i < gi->n; i++) { buf[3 * i] = ex(e[i].pos); buf[3 * i + 1] = ey(e[i].pos); buf[3 * i + 2] = e[i].c; }
    return gi->n;
}

void cp_free(CpSearch *S) {
    if (!S) return;
    for (int w = 0; w < S->workers; w++) {
        State *s;
        while ((s = dq_pop_front(&S->dq[w]))) state_free(S, s);
        free(S->dq[w].buf);
    }
    for (int i = 0; i < S->nfound; i++) free(S->found[i].data);
    free(S->found); free(S->cache); free(S->G.g); free(S->G.pool); free(S->G.tab);
    free(S->gv); free(S->heap); free(S->heap_low);
    free(S);
}

void cp_trim(CpSearch *S) { trim(S); }
