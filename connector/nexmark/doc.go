// Package nexmark generates the Nexmark benchmark's stream of people,
// auctions and bids, as a split source and as a pure generator.
//
// The generator follows ../shared/nexmark/GENERATOR.md, a summary of Flink
// Nexmark's (github.com/nexmark/nexmark): the same event types in the
// proportions 1:3:46, the same id, timestamp and hot-key rules, the same
// random draws in the same order. Flink's generator draws from unseeded
// random generators, so no two of its runs agree; this one seeds a fresh
// SplitMix64 generator from each event's id (as Apache Beam's original
// does), so the stream is a pure function of the Config and any event can be
// made alone: Generator.Event(split, k). bench/flink holds a Java port that
// makes the same stream byte for byte; testdata/golden-1000.txt pins it.
//
// Flink's generator is split in n parallel generators that own disjoint id
// ranges and share one timeline. Here n is Config.Splits, 8 by default
// whatever the job's parallelism, as in the published runs: n changes the
// data (hot keys and auction lengths are per split), so it must not follow
// the parallelism if results are to be compared.
//
// The Source emits Event values with their dateTime as the record's
// timestamp; Event.Row gives the row of Flink Nexmark's SQL table
// (`'connector' = 'nexmark'`, options read by FromOptions).
package nexmark
