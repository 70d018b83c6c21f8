/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The index seam: the design cfg.index names (kv_index.h). */
#include "kv_index.h"

#include <string.h>

static const struct kv_index_ops *const designs[KVFTL_INDEX_LSM + 1] = {
    [KVFTL_INDEX_HASH] = &hash_index_ops,
    [KVFTL_INDEX_PM983] = &pm983_index_ops,
    [KVFTL_INDEX_LSM] = &lsm_index_ops,
};

void kv_index_init(struct kv_index *ix, struct space *sp, struct value_log *vl,
                   const struct kvftl_config *cfg)
{
    memset(ix, 0, sizeof(*ix));
    ix->design = cfg->index;
    ix->ops = designs[cfg->index];
    ix->ops->init(ix, sp, vl, cfg);
}
