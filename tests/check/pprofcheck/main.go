// SPDX-License-Identifier: BSD-2-Clause
//
// pprofcheck FILE...: each file must be a pprof profile that Google's pprof
// library (Debian's golang-github-google-pprof-dev) parses and finds valid
// (profile.Parse, then CheckValid), as Parca, Pyroscope and the
// OpenTelemetry Collector read them. Prints one JSON object per file with
// what the tests check: sample and period types, duration, the values
// summed by leaf function, by thread_name label and by "PID/thread_name"
// (the pid label with it: a test's own process, not another of the same
// name that runs on the machine), and each label's values. Exit status 1 on the first file that fails.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/google/pprof/profile"
)

type summary struct {
	File        string              `json:"file"`
	SampleTypes []string            `json:"sampleTypes"`
	PeriodType  string              `json:"periodType"`
	Period      int64               `json:"period"`
	DurationNs  int64               `json:"durationNs"`
	Samples     int                 `json:"samples"`
	ByLeaf      map[string][]int64  `json:"byLeaf"`
	ByThread    map[string][]int64  `json:"byThread"`
	ByPidThread map[string][]int64  `json:"byPidThread"`
	Functions   []string            `json:"functions"`
	Labels      map[string][]string `json:"labels"`
	Unlabelled  int                 `json:"unlabelled"`
}

func add(m map[string][]int64, k string, v []int64) {
	s := m[k]
	if s == nil {
		s = make([]int64, len(v))
	}
	for i := range v {
		s[i] += v[i]
	}
	m[k] = s
}

func check(path string) (*summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("profile.Parse: %v", err)
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("CheckValid: %v", err)
	}
	s := &summary{File: path, DurationNs: p.DurationNanos, Samples: len(p.Sample),
		Period: p.Period, ByLeaf: map[string][]int64{}, ByThread: map[string][]int64{},
		ByPidThread: map[string][]int64{}, Labels: map[string][]string{}}
	for _, t := range p.SampleType {
		s.SampleTypes = append(s.SampleTypes, t.Type+"/"+t.Unit)
	}
	if p.PeriodType != nil {
		s.PeriodType = p.PeriodType.Type + "/" + p.PeriodType.Unit
	}
	for _, fn := range p.Function {
		s.Functions = append(s.Functions, fn.Name)
	}
	seen := map[string]map[string]bool{}
	note := func(k, v string) {
		if seen[k] == nil {
			seen[k] = map[string]bool{}
		}
		seen[k][v] = true
	}
	for _, smp := range p.Sample {
		leaf := "(no stack)"
		if len(smp.Location) > 0 && len(smp.Location[0].Line) > 0 {
			leaf = smp.Location[0].Line[0].Function.Name
		}
		add(s.ByLeaf, leaf, smp.Value)
		if len(smp.Label) == 0 && len(smp.NumLabel) == 0 {
			s.Unlabelled++
		}
		for k, vs := range smp.Label {
			for _, v := range vs {
				note(k, v)
				if k == "thread_name" {
					add(s.ByThread, v, smp.Value)
				}
			}
		}
		for k, vs := range smp.NumLabel {
			for _, v := range vs {
				note(k, fmt.Sprint(v))
			}
		}
		if pids := smp.NumLabel["pid"]; len(pids) == 1 {
			for _, name := range smp.Label["thread_name"] {
				add(s.ByPidThread, fmt.Sprintf("%d/%s", pids[0], name), smp.Value)
			}
		}
	}
	for k, vs := range seen {
		for v := range vs {
			s.Labels[k] = append(s.Labels[k], v)
		}
		sort.Strings(s.Labels[k])
	}
	return s, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pprofcheck FILE...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		s, err := check(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pprofcheck: %s: %v\n", path, err)
			os.Exit(1)
		}
		out, _ := json.Marshal(s)
		fmt.Println(string(out))
	}
}
