package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/examples/billing/pipeline"
)

// copyCheck is the Jepsen-style verdict on the copy job.
type copyCheck struct {
	inCommitted, inAborted int64 // distinct input ids by their transaction's outcome
	outVisible             int64 // records served to read_committed
	outAbortedTxn          int64 // output records of aborted transactions (invisible, as they must be)
	lost, duplicated       int64 // committed input ids missing / extra copies of an id
	abortedRead            int64 // visible output records of an aborted transaction (input or output side)
	phantom                int64 // visible output records whose id was never written
	lostSample             []int64
	dupSample              []int64
}

func (c copyCheck) ok() bool {
	return c.lost == 0 && c.duplicated == 0 && c.abortedRead == 0 && c.phantom == 0 && c.inCommitted > 0
}

// checkCopy reads input and output twice each — as read_uncommitted with
// markers (to learn each record's transaction outcome from the log itself)
// and as read_committed (what a consumer is served) — and compares.
func checkCopy(ctx context.Context, cl *kgo.Client, brokers, in, out string, partitions int32) (copyCheck, error) {
	inIDs, err := readOutcomes(ctx, cl, brokers, in, partitions)
	if err != nil {
		return copyCheck{}, err
	}
	outIDs, err := readOutcomes(ctx, cl, brokers, out, partitions)
	if err != nil {
		return copyCheck{}, err
	}
	return compareCopy(inIDs, outIDs), nil
}

// compareCopy is the check proper: input and output as read both ways.
func compareCopy(inIDs, outIDs outcomes) copyCheck {
	var c copyCheck
	committedIn := map[int64]bool{}
	abortedIn := map[int64]bool{}
	for _, r := range inIDs.visible {
		committedIn[r.id] = true
	}
	for _, r := range inIDs.raw {
		if r.outcome == abortedRec && !committedIn[r.id] {
			abortedIn[r.id] = true
		}
	}
	c.inCommitted, c.inAborted = int64(len(committedIn)), int64(len(abortedIn))
	for _, r := range outIDs.raw {
		if r.outcome == abortedRec {
			c.outAbortedTxn++
		}
	}
	copies := map[int64]int64{}
	for _, r := range outIDs.visible {
		c.outVisible++
		copies[r.id]++
		switch {
		case outIDs.outcome[r.pos] == abortedRec || abortedIn[r.id]:
			c.abortedRead++
		case !committedIn[r.id]:
			c.phantom++
		}
	}
	for id := range committedIn {
		if copies[id] == 0 {
			c.lost++
			c.lostSample = appendSample(c.lostSample, id)
		}
	}
	for id, n := range copies {
		if n > 1 {
			c.duplicated += n - 1
			c.dupSample = appendSample(c.dupSample, id)
		}
	}
	sortSample(c.lostSample)
	sortSample(c.dupSample)
	return c
}

func sortSample(s []int64) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }

func appendSample(s []int64, id int64) []int64 {
	if len(s) < 10 {
		s = append(s, id)
	}
	return s
}

type pos struct {
	partition int32
	offset    int64
}

type idRec struct {
	id      int64
	pos     pos
	outcome outcome
}

type outcomes struct {
	raw, visible []idRec
	outcome      map[pos]outcome
}

// readOutcomes reads topic both ways; every data record's id is parsed.
func readOutcomes(ctx context.Context, cl *kgo.Client, brokers, topic string, partitions int32) (outcomes, error) {
	o := outcomes{outcome: map[pos]outcome{}}
	e, err := listEnds(ctx, cl, topic, partitions)
	if err != nil {
		return o, err
	}
	hwm, lso := map[int32]int64{}, map[int32]int64{}
	for p, v := range e {
		hwm[p], lso[p] = v.hwm, v.lso
	}
	raw, err := readLog(ctx, brokers, topic, hwm, false)
	if err != nil {
		return o, err
	}
	if o.raw, err = copyIDs(topic, raw, true); err != nil {
		return o, err
	}
	for _, r := range o.raw {
		o.outcome[r.pos] = r.outcome
	}
	vis, err := readLog(ctx, brokers, topic, lso, true)
	if err != nil {
		return o, err
	}
	o.visible, err = copyIDs(topic, vis, false)
	return o, err
}

// copyIDs parses the data records of a log; with markers, each gets the
// outcome of its transaction.
func copyIDs(topic string, log map[int32][]entry, markers bool) ([]idRec, error) {
	var out []idRec
	for p, es := range log {
		var res map[int64]outcome
		if markers {
			res = resolve(es)
		}
		for _, en := range es {
			if en.control {
				continue
			}
			id, err := copyID(topic, p, en)
			if err != nil {
				return nil, err
			}
			out = append(out, idRec{id, pos{p, en.offset}, res[en.offset]})
		}
	}
	return out, nil
}

func copyID(topic string, p int32, e entry) (int64, error) {
	var r copyRecord
	if err := json.Unmarshal(e.value, &r); err != nil || r.ID == 0 {
		return 0, fmt.Errorf("%s[%d]@%d: not a copy record: %q", topic, p, e.offset, e.value)
	}
	return r.ID, nil
}

// billingCheck is the verdict on the billing job: account_totals against
// totals recomputed from the bills topic.
type billingCheck struct {
	billRecords, distinct  int64
	accountsWant, accounts int
	billsCounted           int64
	lost, duplicated       int64 // bills missing from / counted twice in the table's bill_count
	wrongAccounts          int   // accounts whose total or count differs, or that no bill names
	samples                []string
}

func (b billingCheck) ok() bool { return b.wrongAccounts == 0 && b.distinct > 0 }

// readBills reads every bill of the topic (no transactions: read_uncommitted).
func readBills(ctx context.Context, cl *kgo.Client, brokers, topic string, partitions int32) ([]pipeline.Bill, error) {
	e, err := listEnds(ctx, cl, topic, partitions)
	if err != nil {
		return nil, err
	}
	hwm := map[int32]int64{}
	for p, v := range e {
		hwm[p] = v.hwm
	}
	log, err := readLog(ctx, brokers, topic, hwm, false)
	if err != nil {
		return nil, err
	}
	var bills []pipeline.Bill
	for p, es := range log {
		for _, en := range es {
			if en.control {
				continue
			}
			var b pipeline.Bill
			if err := json.Unmarshal(en.value, &b); err != nil {
				return nil, fmt.Errorf("%s[%d]@%d: %w", topic, p, en.offset, err)
			}
			bills = append(bills, b)
		}
	}
	return bills, nil
}

func checkBilling(ctx context.Context, bills []pipeline.Bill, db *sql.DB) (billingCheck, error) {
	rows, err := db.QueryContext(ctx, "SELECT account_id, total, bill_count FROM account_totals")
	if err != nil {
		return billingCheck{}, err
	}
	defer rows.Close()
	got := map[string]pipeline.Total{}
	for rows.Next() {
		var id, total string
		var n int64
		if err := rows.Scan(&id, &total, &n); err != nil {
			return billingCheck{}, err
		}
		d, err := decimal.NewFromString(total)
		if err != nil {
			return billingCheck{}, fmt.Errorf("account_totals[%s].total %q: %w", id, total, err)
		}
		got[id] = pipeline.Total{AccountID: id, Total: d, Count: n}
	}
	if err := rows.Err(); err != nil {
		return billingCheck{}, err
	}
	return compareBilling(bills, got), nil
}

// compareBilling compares the table's rows with totals recomputed from
// the bills (each bill id counted once).
func compareBilling(bills []pipeline.Bill, got map[string]pipeline.Total) billingCheck {
	want := pipeline.Truth(bills)
	c := billingCheck{billRecords: int64(len(bills)), accountsWant: len(want), accounts: len(got)}
	for _, t := range want {
		c.distinct += t.Count
	}
	for id, g := range got {
		c.billsCounted += g.Count
		w, ok := want[id]
		if g.Count < w.Count {
			c.lost += w.Count - g.Count
		} else {
			c.duplicated += g.Count - w.Count
		}
		if !ok || g.Count != w.Count || !g.Total.Equal(w.Total) {
			c.wrongAccounts++
			c.samples = append(c.samples, fmt.Sprintf("%s: got %s/%d, want %s/%d", id, g.Total.StringFixed(2), g.Count, w.Total.StringFixed(2), w.Count))
		}
	}
	for id, w := range want {
		if _, ok := got[id]; !ok {
			c.lost += w.Count
			c.wrongAccounts++
			c.samples = append(c.samples, fmt.Sprintf("%s: missing, want %s/%d", id, w.Total.StringFixed(2), w.Count))
		}
	}
	sort.Strings(c.samples)
	if len(c.samples) > 10 {
		c.samples = c.samples[:10]
	}
	return c
}

// openKafkaTxns lists transactional ids whose transaction is not complete.
func openKafkaTxns(ctx context.Context, adm *kadm.Client) func() ([]string, error) {
	return func() ([]string, error) {
		ls, err := adm.ListTransactions(ctx, nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence"})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, t := range ls.Sorted() {
			out = append(out, t.TxnID+" ("+t.State+")")
		}
		return out, nil
	}
}

// lsoBehind lists partitions of the topics whose LSO is below the HWM.
func lsoBehind(ctx context.Context, cl *kgo.Client, partitions int32, topics ...string) (checked int, behind []string, err error) {
	for _, t := range topics {
		e, err := listEnds(ctx, cl, t, partitions)
		if err != nil {
			return checked, behind, err
		}
		for p, v := range e {
			checked++
			if v.lso != v.hwm {
				behind = append(behind, fmt.Sprintf("%s[%d] LSO %d < HWM %d", t, p, v.lso, v.hwm))
			}
		}
	}
	sort.Strings(behind)
	return checked, behind, nil
}

func joinSample(s []string) string { return strings.Join(s, "; ") }
