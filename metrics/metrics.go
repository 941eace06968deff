// Package metrics exports the state of leaf's domain to Prometheus: the
// ids issued by mode and biz tag, the segment buffers and their loads, the
// snowflake generator and its worker lease, the store's health and the
// build. The collectors read their sources when scraped; only the times
// of segment loads are observed as the loads happen.
//
// The HTTP request metrics (leaf_http_*) belong to the HTTP edge and are
// registered by package httpapi. docs/observability.md, "Metrics", lists
// them all.
package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// Segments is the segment allocator's state (segment.Allocator implements
// it).
type Segments interface {
	// EachTag calls f with every tag's figures and returns the totals
	// over all tags.
	EachTag(f func(segment.TagStats)) segment.Totals
}

// Snowflake is the snowflake generator's state (snowflake.Generator
// implements it).
type Snowflake interface {
	Stats() snowflake.Stats
}

// UUIDs counts the UUIDs made (uuidv7.Generator implements it).
type UUIDs interface {
	Issued() uint64
}

// Sources are what Register exports; a zero field leaves its metrics out.
type Sources struct {
	// Version is the version of leaf that leaf_build_info names.
	Version string
	// StoreUp says whether the store answers, for leaf_store_up.
	StoreUp func() bool
	// StoresDurable says, for leaf_store_durable, which stores can forget
	// a commit they acknowledged; a store whose settings were not read yet
	// is left out.
	StoresDurable func() []StoreDurability
	// StoreRestartJumps counts, for leaf_store_restart_jumps_total, the
	// times this process moved every row of a store forward after the
	// database started again while it could forget commits.
	StoreRestartJumps func() []StoreCount
	// Segments is read for leaf_ids_issued_total{mode="segment"}, the
	// leaf_segment_* metrics of the biz tags chosen (see select.go) and
	// the totals over all of them.
	Segments Segments
	// Headroom lists the bounded tags, for leaf_tag_bound, leaf_tag_ids_left
	// and leaf_tag_bound_used_ratio (headroom.go).
	Headroom func() []segment.Headroom
	// CappedPeriods lists the capped formatted tags owned here, each with
	// the last number of a period as its Bound and the highest number
	// taken of the period in use, for leaf_capped_period_left and
	// leaf_capped_period_used_ratio.
	CappedPeriods func() []segment.Headroom
	// SegmentTags are biz tags that always have series of their own once
	// used, at most MaxNamedTags (see ParseTags).
	SegmentTags []string
	// SegmentLoads is leaf_segment_load_duration_seconds; its Observe is
	// the allocator's segment.Options.OnLoad, so it exists before the
	// allocator does.
	SegmentLoads *LoadTimes
	// Snowflake is read for leaf_ids_issued_total{mode="snowflake"} and
	// the leaf_snowflake_* metrics.
	Snowflake Snowflake
	// UUIDs is read for leaf_ids_issued_total{mode="uuid"}.
	UUIDs UUIDs
	// Sequences is read for the leaf_sequence_* metrics.
	Sequences Sequences
	// Now is the clock that tells how long ago a tag's waits grew; nil
	// means time.Now.
	Now func() time.Time
}

// issuedHelp is the help of leaf_ids_issued_total. Each mode's collector
// has mode as a constant label and tag as a variable one, so that all of
// them can be registered on one registry.
const issuedHelp = "Ids issued by this process, by mode and biz tag (empty for snowflake)."

// Register registers the metrics of src on reg. It fails if reg already
// holds one of their names.
func Register(reg prometheus.Registerer, src Sources) error {
	var cs []prometheus.Collector
	if src.Version != "" {
		cs = append(cs, newBuildInfoCollector(src.Version))
	}
	if src.StoreUp != nil {
		cs = append(cs, newStoreUpCollector(src.StoreUp))
	}
	if src.StoresDurable != nil {
		cs = append(cs, storeDurableCollector{src: src.StoresDurable})
	}
	if src.StoreRestartJumps != nil {
		cs = append(cs, storeJumpsCollector{src: src.StoreRestartJumps})
	}
	if src.Segments != nil {
		if len(src.SegmentTags) > MaxNamedTags {
			return fmt.Errorf("register the domain metrics: %d segment tags named, more than %d", len(src.SegmentTags), MaxNamedTags)
		}
		cs = append(cs, newSegmentCollector(src))
	}
	if src.Headroom != nil {
		cs = append(cs, newHeadroomCollector(src.Headroom))
	}
	if src.CappedPeriods != nil {
		cs = append(cs, newCappedCollector(src.CappedPeriods))
	}
	if src.SegmentLoads != nil {
		cs = append(cs, src.SegmentLoads.vec)
	}
	if src.Snowflake != nil {
		cs = append(cs, snowflakeCollector{src: src.Snowflake})
	}
	if src.UUIDs != nil {
		cs = append(cs, uuidCollector{src: src.UUIDs})
	}
	if src.Sequences != nil {
		cs = append(cs, sequenceCollector{src: src.Sequences})
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register the domain metrics: %w", err)
		}
	}
	return nil
}
