// Package pipeline is the billing job that motivates Weir: bill events from Kafka,
// de-duplicated across checkpoints, summed per account, written to a
// database exactly once. The bill model, its generator and the ground
// truth live in internal/billgen; they are re-exported here for the
// example's users.
package pipeline

import "github.com/weirstream/weir/internal/billgen"

// Bill is one bill event (see billgen.Bill).
type Bill = billgen.Bill

// GenOptions configures Generate (see billgen.GenOptions).
type GenOptions = billgen.GenOptions

// Total is an account's expected total (see billgen.Total).
type Total = billgen.Total

// TimeLayout is the SQL form of a bill's event time.
const TimeLayout = billgen.TimeLayout

// Generate makes seeded bills with duplicates (see billgen.Generate).
func Generate(o GenOptions) (events []Bill, dups int) { return billgen.Generate(o) }

// Truth recomputes the totals per account from the bills, each bill_id
// counted once (see billgen.Truth).
func Truth(events []Bill) map[string]Total { return billgen.Truth(events) }

// FormatTruth renders totals as the CSV weir tool gen-bills writes (see
// billgen.FormatTruth).
func FormatTruth(t map[string]Total) string { return billgen.FormatTruth(t) }
