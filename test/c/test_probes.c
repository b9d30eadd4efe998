/*
 * test_probes.c - session probes (probes.h): a slot's probe entries in
 * order at each point, its verdict once the point's last entry ended,
 * the lowest slot's reason, and the merge of threads' totals.
 */
#include "check.h"
#include "probes.h"

#include <string.h>

static engine_config cfg;

static void test_points(void) {
    request_set set;
    char err[256];
    memset(&cfg, 0, sizeof(cfg));
    strcpy(cfg.host, "127.0.0.1");
    strcpy(cfg.port, "8080");
    const char *text = "---\nGET /\n--- probe name=a\nGET /a\n--- probe name=b\n@expect status=200\nGET /b\n";
    CHECK(requests_parse(&set, &cfg, text, strlen(text), "reqs.txt", err, sizeof err) == NULL);
    CHECK_EQ_U64(set.probe_count, 2);
    slot_probe p;
    memset(&p, 0, sizeof(p));
    probe_totals t[PROBE_POINTS];
    memset(t, 0, sizeof(t));
    /* Start: a then b; the slot passes once b passed. */
    const request_template *a = probe_next(&p, &set, PROBE_START);
    CHECK(a && strcmp(a->name, "a") == 0 && probe_active(&p));
    probe_outcome(&p, t, &set, 3, 1, NULL);
    CHECK(probe_active(&p) && t[PROBE_START].passed == 0);
    const request_template *b = probe_next(&p, &set, PROBE_START);
    CHECK(b && strcmp(b->name, "b") == 0);
    probe_outcome(&p, t, &set, 3, 1, NULL);
    CHECK(!probe_active(&p) && p.done[PROBE_START]);
    CHECK_EQ_U64(t[PROBE_START].passed, 1);
    CHECK(probe_next(&p, &set, PROBE_START) == NULL); /* once per point */
    /* End: a fails, b still goes out; the slot failed with a's reason. */
    CHECK(probe_next(&p, &set, PROBE_END) == a);
    probe_outcome(&p, t, &set, 3, 0, "a: status 302 to /login, expected 200");
    CHECK(probe_next(&p, &set, PROBE_END) == b);
    probe_outcome(&p, t, &set, 3, 1, NULL);
    CHECK_EQ_U64(t[PROBE_END].failed, 1);
    CHECK_EQ_U64(t[PROBE_END].failed_listed, 1);
    CHECK_EQ_U64(t[PROBE_END].failed_slots[0], 3);
    CHECK(strcmp(t[PROBE_END].reason, "a: status 302 to /login, expected 200") == 0);
    /* Another thread's lower slot gives the merged reason. */
    probe_totals other;
    memset(&other, 0, sizeof(other));
    slot_probe q;
    memset(&q, 0, sizeof(q));
    probe_totals ot[PROBE_POINTS];
    memset(ot, 0, sizeof(ot));
    probe_next(&q, &set, PROBE_END);
    probe_outcome(&q, ot, &set, 1, 0, "timeout error");
    probe_next(&q, &set, PROBE_END);
    probe_outcome(&q, ot, &set, 1, 0, "later");
    other = ot[PROBE_END];
    probe_totals_merge(&t[PROBE_END], &other);
    CHECK_EQ_U64(t[PROBE_END].failed, 2);
    CHECK(strcmp(t[PROBE_END].reason, "timeout error") == 0 && t[PROBE_END].reason_slot == 1);
    requests_free(&set);
}

int main(void) {
    test_points();
    return check_report("probes");
}
