/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Linked into the programs that take a device path (test_snia_cpp,
 * e2e_snia) for the unit suite: the in-process device starts before main(),
 * so that "/dev/null" (LOOPDEV_PATH) is a KV namespace for them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "loopdev.h"

__attribute__((constructor)) static void loopdev_boot(void)
{
    if (loopdev_start() != 0) {
        printf("Bail out! the in-process device did not start\n");
        exit(1);
    }
}

__attribute__((destructor)) static void loopdev_halt(void)
{
    loopdev_stop();
}
