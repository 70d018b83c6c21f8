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

#endif
