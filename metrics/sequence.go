package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/sequence"
)

// Sequences is what the sequence metrics read (sequence.Sequencer).
type Sequences interface {
	Stats() sequence.Stats
}

// The sequence metrics: figures of the whole process, never a series per
// space or key.
var (
	seqSectionsDesc = prometheus.NewDesc("leaf_sequence_sections",
		"Sections of every sequence space known to this process, and its ordered tags (one section each).", nil, nil)
	seqOwnedDesc = prometheus.NewDesc("leaf_sequence_sections_owned",
		"Sequence sections (ordered tags included) this process serves now, under a live lease.", nil, nil)
	seqKeysDesc = prometheus.NewDesc("leaf_sequence_keys_in_memory",
		"Sequence keys with a counter in this process's memory.", nil, nil)
	seqForgottenDesc = prometheus.NewDesc("leaf_sequence_keys_forgotten_total",
		"Sequence keys whose counters this process forgot, holding more than --sequence-keys-max: each goes on above the highest number its section issued, with a gap.", nil, nil)
	seqMovesDesc = prometheus.NewDesc("leaf_sequence_ownership_moves_total",
		"Sequence sections this process took over (change=taken) or stopped serving, handed over or lost (change=dropped).", []string{"change"}, nil)
)

type sequenceCollector struct{ src Sequences }

func (sequenceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- seqSectionsDesc
	ch <- seqOwnedDesc
	ch <- seqKeysDesc
	ch <- seqForgottenDesc
	ch <- seqMovesDesc
}

func (c sequenceCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Stats()
	ch <- prometheus.MustNewConstMetric(seqSectionsDesc, prometheus.GaugeValue, float64(st.Sections))
	ch <- prometheus.MustNewConstMetric(seqOwnedDesc, prometheus.GaugeValue, float64(st.SectionsOwned))
	ch <- prometheus.MustNewConstMetric(seqKeysDesc, prometheus.GaugeValue, float64(st.KeysInMemory))
	ch <- prometheus.MustNewConstMetric(seqForgottenDesc, prometheus.CounterValue, float64(st.KeysForgotten))
	ch <- prometheus.MustNewConstMetric(seqMovesDesc, prometheus.CounterValue, float64(st.Taken), "taken")
	ch <- prometheus.MustNewConstMetric(seqMovesDesc, prometheus.CounterValue, float64(st.Dropped), "dropped")
}
