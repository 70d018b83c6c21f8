/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tap_cunit.h"

#include <stdio.h>

#include <CUnit/TestRun.h>

static unsigned tap_number;
static unsigned tap_failed;

static void on_test_complete(const CU_pTest test, const CU_pSuite suite,
                             const CU_pFailureRecord failures)
{
    tap_number++;
    if (!failures) {
        printf("ok %u - %s/%s\n", tap_number, suite->pName, test->pName);
    } else {
        tap_failed++;
        printf("not ok %u - %s/%s\n", tap_number, suite->pName, test->pName);
        for (CU_pFailureRecord f = failures; f; f = f->pNext) {
            printf("# %s:%u: %s\n", f->strFileName ? f->strFileName : "?", f->uiLineNumber,
                   f->strCondition ? f->strCondition : "?");
        }
    }
    fflush(stdout);
}

static void on_suite_init_failure(const CU_pSuite suite)
{
    tap_number++;
    tap_failed++;
    printf("not ok %u - %s (suite initialisation failed)\n", tap_number, suite->pName);
}

int tap_cunit_run(void)
{
    unsigned total = 0;
    for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext) {
        total += s->uiNumberOfTests;
    }
    printf("1..%u\n", total);
    fflush(stdout);
    CU_set_test_complete_handler(on_test_complete);
    CU_set_suite_init_failure_handler(on_suite_init_failure);
    CU_set_error_action(CUEA_IGNORE);
    CU_run_all_tests();
    unsigned ran = tap_number;
    CU_cleanup_registry();
    if (ran != total) {
        printf("# planned %u tests, ran %u\n", total, ran);
        return 1;
    }
    return tap_failed ? 1 : 0;
}

int tap_main(const struct tap_suite *suites, unsigned nr_suites)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        printf("Bail out! CUnit: %s\n", CU_get_error_msg());
        return 1;
    }
    for (unsigned i = 0; i < nr_suites; i++) {
        CU_pSuite s = CU_add_suite_with_setup_and_teardown(
            suites[i].name, suites[i].init, suites[i].cleanup, suites[i].setup, suites[i].teardown);
        for (unsigned t = 0; s && t < suites[i].nr_tests; t++) {
            if (!CU_add_test(s, suites[i].tests[t].name, suites[i].tests[t].run)) {
                s = NULL;
            }
        }
        if (!s) {
            printf("Bail out! CUnit cannot register suite %s: %s\n", suites[i].name,
                   CU_get_error_msg());
            CU_cleanup_registry();
            return 1;
        }
    }
    return tap_cunit_run();
}
