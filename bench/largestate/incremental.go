package main

import (
	"strconv"
)

// incrementalConf adds execution.checkpointing.incremental to the
// backend configuration: incremental checkpoints upload only the SSTs the
// checkpoint storage does not hold yet; without them every checkpoint is
// a full canonical snapshot (one blob of the whole state, in memory).
func incrementalConf(conf map[string]string, on bool) {
	conf["execution.checkpointing.incremental"] = strconv.FormatBool(on)
}
