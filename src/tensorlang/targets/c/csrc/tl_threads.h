// tl_threads.h: the run-time team decision of parallel loops (codegen.prelude). See docs/c-backend.md.

#ifdef _OPENMP
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static inline int64_t tl_clock(void) {
    struct timespec tl_now;
    clock_gettime(CLOCK_MONOTONIC, &tl_now);
    return (int64_t)tl_now.tv_sec * 1000000000 + tl_now.tv_nsec;
}
/* the most threads a parallel region of this library has run (tl_record): OpenMP keeps
   that many threads, whose workers may still spin after any later region */
static int tl_most_team = 1;
/* This process's threads in state R, the caller excluded: /proc/self/task/<tid>/stat's
   state follows the last ')' (the name may hold any character); 0 where /proc is not. */
static long tl_own_running(void) {
    DIR *tl_dir = opendir("/proc/self/task");
    if (tl_dir == NULL) return 0;
    long tl_count = 0;
    char tl_path[64], tl_stat[512];
    for (struct dirent *tl_entry; (tl_entry = readdir(tl_dir)) != NULL;) {
        if (tl_entry->d_name[0] < '0' || tl_entry->d_name[0] > '9') continue;
        snprintf(tl_path, sizeof tl_path, "/proc/self/task/%.20s/stat", tl_entry->d_name);
        int tl_fd = open(tl_path, O_RDONLY);
        if (tl_fd < 0) continue;
        ssize_t tl_n = read(tl_fd, tl_stat, sizeof tl_stat - 1);
        close(tl_fd);
        if (tl_n <= 0) continue;
        tl_stat[tl_n] = 0;
        const char *tl_end = strrchr(tl_stat, ')');
        if (tl_end != NULL && tl_end[1] == ' ' && tl_end[2] == 'R') tl_count++;
    }
    closedir(tl_dir);
    return tl_count > 0 ? tl_count - 1 : 0;
}
/* Runnable tasks that are not this caller nor its own team's workers: of the ``running``
   /proc/loadavg counts (the caller included), up to ``team`` - 1 of this process's
   ``own`` running threads are OpenMP's workers (of a team of at most ``team``), spinning. */
static inline long tl_others(long tl_running, long tl_own, int tl_team_n) {
    long tl_workers = tl_own < tl_team_n - 1 ? tl_own : tl_team_n - 1;
    long tl_rest = tl_running - 1 - (tl_workers > 0 ? tl_workers : 0);
    return tl_rest > 0 ? tl_rest : 0;
}
/* The busy cores of this sample that the last sample saw busy too (the fewer of the
   two): a task seen once (a kernel thread, a peer's pool waking for a moment) is not
   load; ``last`` keeps the sample before. */
static inline long tl_steady(long *tl_last, long tl_now) {
    long tl_before = __atomic_exchange_n(tl_last, tl_now, __ATOMIC_RELAXED);
    return tl_before < tl_now ? tl_before : tl_now;
}
static int tl_idle_cpus(void) {
    static int64_t tl_sampled = INT64_MIN / 2;  /* ns */
    static int tl_idle = 0;
    int64_t tl_ns = tl_clock();
    if (tl_ns - __atomic_load_n(&tl_sampled, __ATOMIC_RELAXED) < 10000000) return __atomic_load_n(&tl_idle, __ATOMIC_RELAXED);
    long tl_cpus = sysconf(_SC_NPROCESSORS_ONLN), tl_running = 1;
    char tl_text[128];
    int tl_fd = open("/proc/loadavg", O_RDONLY), tl_fields = 0;
    ssize_t tl_n = tl_fd >= 0 ? read(tl_fd, tl_text, sizeof tl_text - 1) : -1;
    if (tl_fd >= 0) close(tl_fd);
    for (ssize_t tl_k = 0; tl_k < tl_n && tl_fields < 3; tl_k++)
        if (tl_text[tl_k] == ' ' && ++tl_fields == 3) tl_running = atol(tl_text + tl_k + 1);
    int tl_team_n = __atomic_load_n(&tl_most_team, __ATOMIC_RELAXED);
    long tl_own = tl_running > 1 && tl_team_n > 1 ? tl_own_running() : 0;  /* only where it can matter */
    long tl_busy = 1 + tl_others(tl_running, tl_own, tl_team_n);
    static long tl_last_busy = 1;
    tl_busy = tl_steady(&tl_last_busy, tl_busy);
    int tl_found = (int)(tl_cpus > tl_busy ? tl_cpus - tl_busy : 0);  /* the cores nobody else runs on */
    __atomic_store_n(&tl_idle, tl_found, __ATOMIC_RELAXED);
    __atomic_store_n(&tl_sampled, tl_ns, __ATOMIC_RELAXED);
    return tl_found;
}
static inline int tl_team(int tl_asked, int tl_cap) {
    int tl_n = tl_asked < tl_cap ? tl_asked : tl_cap;
    if (tl_n > 1) { int tl_free = 1 + tl_idle_cpus(); if (tl_free < tl_n) tl_n = tl_free; }
    return tl_n;
}
/* What each parallel loop has measured (CHOICE): the running mean of its times with
   one thread ([0]) and with its team ([1]), each over the last few calls, and how many
   calls it has seen.  Races between callers only blur the means. */
typedef struct { int64_t mean[2]; int64_t seen[2]; int64_t calls; } tl_choice;
static inline int tl_pick(tl_choice *tl_c, int tl_team_n) {
    if (tl_team_n <= 1) return 1;
    int64_t tl_k = __atomic_fetch_add(&tl_c->calls, 1, __ATOMIC_RELAXED);
    int64_t tl_s0 = __atomic_load_n(&tl_c->seen[0], __ATOMIC_RELAXED), tl_s1 = __atomic_load_n(&tl_c->seen[1], __ATOMIC_RELAXED);
    if (tl_s0 < TL_FILL_WARM || tl_s1 < TL_FILL_WARM) return tl_s1 <= tl_s0 ? tl_team_n : 1;  /* try both, team first */
    int tl_team_wins = __atomic_load_n(&tl_c->mean[1], __ATOMIC_RELAXED) < __atomic_load_n(&tl_c->mean[0], __ATOMIC_RELAXED);
    if (tl_k % TL_FILL_EXPLORE == 0) tl_team_wins = !tl_team_wins;  /* look at the other now and then */
    return tl_team_wins ? tl_team_n : 1;
}
static inline void tl_record(tl_choice *tl_c, int tl_ran, int64_t tl_ns) {
    if (tl_ran > __atomic_load_n(&tl_most_team, __ATOMIC_RELAXED)) __atomic_store_n(&tl_most_team, tl_ran, __ATOMIC_RELAXED);
    int tl_i = tl_ran > 1;
    int64_t tl_old = __atomic_load_n(&tl_c->mean[tl_i], __ATOMIC_RELAXED);
    int64_t tl_other = __atomic_load_n(&tl_c->mean[!tl_i], __ATOMIC_RELAXED);
    int64_t tl_seen = __atomic_fetch_add(&tl_c->seen[tl_i], 1, __ATOMIC_RELAXED);
    /* the first time of each pays for cold caches (and the team's thread start): the
       second replaces it; so does a look at the losing choice (its mean is as old as
       its last look, `explore` calls or more ago) */
    int tl_fresh = tl_seen < 2 || (tl_seen >= TL_FILL_WARM && tl_old > tl_other);
    __atomic_store_n(&tl_c->mean[tl_i], tl_fresh ? tl_ns : tl_old + (tl_ns - tl_old) / TL_FILL_DECAY, __ATOMIC_RELAXED);
}
#endif
