/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Run every registered CUnit suite and report each test case as a TAP line
 * ("ok N - suite/test" or "not ok N - suite/test"), so that meson and
 * scripts/test.sh count test cases, not executables.
 */
#ifndef TESTS_TAP_CUNIT_H
#define TESTS_TAP_CUNIT_H

#include <CUnit/CUnit.h>

/*
 * tap_cunit_run() - run the registry built by the caller; print the plan,
 * one TAP line per test and the failed assertions as TAP diagnostics.
 * Returns the process exit status: 0 when every test passed.
 */
int tap_cunit_run(void);

/* One test case: its name in the TAP line and its function. */
struct tap_test {
    const char *name;
    CU_TestFunc run;
};

/* TAP_TEST(store_short_key): the case "store_short_key", run by test_store_short_key(). */
#define TAP_TEST(name) {#name, test_##name}

/*
 * TAP_TEST_FN(test_fifo_order): the case "test_fifo_order", run by
 * test_fifo_order(): the name is the function's, prefix and all (the kvftl
 * suites' TAP names).
 */
#define TAP_TEST_FN(fn) {#fn, fn}

/*
 * A suite: its name, its CUnit init and cleanup (NULL: none), its cases,
 * and what runs before and after each case (NULL: nothing).
 */
struct tap_suite {
    const char *name;
    CU_InitializeFunc init;
    CU_CleanupFunc cleanup;
    const struct tap_test *tests;
    unsigned nr_tests;
    CU_SetUpFunc setup;
    CU_TearDownFunc teardown;
};

#define TAP_SUITE(name, init, cleanup, tests) \
    {(name), (init), (cleanup), (tests), sizeof(tests) / sizeof((tests)[0]), NULL, NULL}

/* A suite whose every case runs between @setup and @teardown (a fresh fixture each). */
#define TAP_SUITE_FIXTURE(name, setup, teardown, tests) \
    {(name), NULL, NULL, (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown)}

/*
 * tap_main() - a test program's main(): register @nr_suites suites and their
 * cases in order, then tap_cunit_run(). Returns the process exit status
 * (1 with a "Bail out!" line when CUnit cannot register them).
 */
int tap_main(const struct tap_suite *suites, unsigned nr_suites);

#endif
