package spinpay

import "time"

// The limits of a Gate's decision.
const (
	// scoreOne is a score of 1: every recent poll hit. The score is the
	// moving average of hits (1) and misses (0), in fixed point.
	scoreOne = 1 << 10

	// scoreShift sets the moving average's weight: each outcome moves the
	// score by 1/2^scoreShift of the way to 0 or 1, so it follows the last
	// few dozen polls and one stray miss does not stop polling.
	scoreShift = 3

	// minScore is the hit rate below which polling stops: below one poll
	// in two finding its answer, the CPU a poll holds costs more than the
	// wake-ups the hits save.
	minScore = scoreOne / 2

	// probeEvery is how often a gate that stopped polling polls anyway:
	// one skipped opportunity in probeEvery, so that its score can rise
	// again once the host is quiet.
	probeEvery = 16

	// preemptGap is how long a gap between two consecutive checks of a
	// poll means that the polling thread lost its CPU to another: the
	// poller ends the poll as a miss, since polling on a contended CPU
	// only delays the thread it competes with.
	preemptGap = 20 * time.Microsecond
)
