// Package rest serves the part of Flink's REST API that a running Weir job
// answers today — list jobs, trigger a savepoint and ask for its status,
// stop with a savepoint — with Flink's paths and JSON field names, so
// Flink's tooling and scripts work against it; and the client `weir
// savepoint` uses. The operations issue grows it into the JobManager's
// full API.
//
//	GET  /jobs                                  {"jobs": [{"id", "status"}]}
//	POST /jobs/:jobid/savepoints                {"target-directory", "cancel-job", "formatType", "triggerId"} → {"request-id"}
//	GET  /jobs/:jobid/savepoints/:triggerid     {"status": {"id"}, "operation": {"location" | "failure-cause"}}
//	POST /jobs/:jobid/stop                      {"targetDirectory", "drain", "formatType", "triggerId"} → {"request-id"}
//
// Every path is served under /v1 too. Savepoints are asynchronous
// operations, as in Flink: a POST answers 202 with a trigger id at once,
// and the status is IN_PROGRESS until the savepoint completed or failed.
// The server binds where its caller listens: weir run binds 127.0.0.1
// only. A target directory from a request is used as given (the caller
// owns the machine); authentication comes with the operations issue.
package rest
