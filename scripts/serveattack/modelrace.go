package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The model race: another user who may write in the model root toggles a model's name between
// a hard link to a model inside the root and a symbolic link to a model outside it, as fast as
// the file system lets them, while clients submit builds of that name (and, with -trtbuild, the
// command line builds it into an engine cache of its own). Nothing built, keyed, cached or shown
// may be of the model outside; an engine cache entry is always the engine of the bytes its key
// names.
//
//	serveattack -url URL -state DIR -models ROOT -outside FILE [-trtbuild BIN] modelrace N

// simulatedPlan is what a simulated engine says of the model it was built from.
type simulatedPlan struct {
	modelBytes int64
	layers     int // the network's layers (network_layers)
}

func readPlan(data []byte) (simulatedPlan, error) {
	var p simulatedPlan
	if !bytes.HasPrefix(data, []byte("TRTBUILD-SIMULATED-PLAN")) {
		return p, errors.New("not a simulated plan")
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "model_bytes":
			p.modelBytes, _ = strconv.ParseInt(v, 10, 64)
		case "network_layers":
			p.layers, _ = strconv.Atoi(v)
		}
	}
	return p, nil
}

// toggler swaps name between a hard link to inside and a symbolic link to outside until stop.
func toggler(name, inside, outside string, stop <-chan struct{}, swaps *atomic.Int64) {
	dir := filepath.Dir(name)
	hard, soft := filepath.Join(dir, ".race-hard"), filepath.Join(dir, ".race-soft")
	for {
		select {
		case <-stop:
			os.Remove(hard)
			os.Remove(soft)
			os.Remove(name)
			_ = os.Link(inside, name)
			return
		default:
		}
		os.Remove(hard)
		if os.Link(inside, hard) == nil && os.Rename(hard, name) == nil {
			swaps.Add(1)
		}
		os.Remove(soft)
		if os.Symlink(outside, soft) == nil && os.Rename(soft, name) == nil {
			swaps.Add(1)
		}
	}
}

// cliRace builds model with the command line runs times into an engine cache of its own, and
// says how many were built and refused as changed, and the outputs that were neither.
func cliRace(tb, model, cache, engine string, runs int) (built, changed int, problems []string) {
	for i := range runs {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, tb, "--backend", "sim", "--sim-speed", "1000", "--no-timing-cache", "--progress", "quiet",
			"--engine-cache", cache, "--avg-timing", strconv.Itoa(i%50+1), "-o", engine, model)
		out, err := cmd.CombinedOutput()
		cancel()
		switch {
		case err == nil:
			built++
		case strings.Contains(string(out), "changed while it was being built"), strings.Contains(string(out), "changed after the build was planned"):
			// Found when the engine is committed, or before the worker starts.
			changed++
		case strings.Contains(string(out), "does not exist") || strings.Contains(string(out), "symbolic link") || strings.Contains(string(out), "cannot read model"):
		default:
			if len(problems) < 3 {
				problems = append(problems, strings.TrimSpace(string(out)))
			}
		}
	}
	return built, changed, problems
}

func modelRace(n int, models, outside, tb string) {
	insideData, err := os.ReadFile(filepath.Join(models, "convnet.onnx"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveattack:", err)
		os.Exit(1)
	}
	outsideInfo, err := os.Stat(outside)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveattack:", err)
		os.Exit(1)
	}
	race := filepath.Join(models, "race")
	os.RemoveAll(race)
	if err := os.Mkdir(race, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "serveattack:", err)
		os.Exit(1)
	}
	inside := filepath.Join(race, "inside.onnx")
	if err := os.WriteFile(inside, insideData, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "serveattack:", err)
		os.Exit(1)
	}
	name := filepath.Join(race, "victim.onnx")
	stop := make(chan struct{})
	var swaps atomic.Int64
	done := make(chan struct{})
	go func() { toggler(name, inside, outside, stop, &swaps); close(done) }()

	var (
		mu                            sync.Mutex
		built, refused, shared, other int
		problems                      []string
	)
	problem := func(format string, a ...any) {
		mu.Lock()
		if len(problems) < 5 {
			problems = append(problems, fmt.Sprintf(format, a...))
		} else if len(problems) == 5 {
			problems = append(problems, "…")
		}
		mu.Unlock()
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				// Many keys (avg-timing is in the key): builds, not only cache hits.
				body, _ := json.Marshal(map[string]any{"model": "race/victim.onnx", "options": map[string]any{
					"backend": "sim", "sim-speed": 1000, "no-timing-cache": true, "avg-timing": i%250 + 1}})
				resp, err := hc.Post(*base+"/v1/builds", "application/json", bytes.NewReader(body))
				if err != nil {
					problem("submit %d: %v", i, err)
					continue
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 400 {
					mu.Lock()
					refused++
					mu.Unlock()
					// A refusal speaks of the name, never of the model outside (inputs x, cond).
					if bytes.Contains(data, []byte(`\"cond\"`)) || bytes.Contains(data, []byte(`"cond"`)) {
						problem("submit %d: the refusal quotes the model outside the root: %s", i, data)
					}
					continue
				}
				var s snapshot
				if err := json.Unmarshal(data, &s); err != nil {
					problem("submit %d: %v", i, err)
					continue
				}
				end, err := waitState(s.ID, 2*time.Minute)
				if err != nil {
					problem("build %s: %v", s.ID, err)
					continue
				}
				if end.State != "succeeded" {
					mu.Lock()
					other++
					mu.Unlock()
					problem("build %s: %s %s", s.ID, end.State, end.Result)
					continue
				}
				if plan, err := engineOf(s.ID); err != nil {
					problem("build %s: %v", s.ID, err)
				} else if plan.modelBytes != int64(len(insideData)) {
					problem("build %s: its engine is of a model of %d bytes (the one outside the root has %d), not of the %d bytes inside", s.ID, plan.modelBytes, outsideInfo.Size(), len(insideData))
				}
				mu.Lock()
				if resp.StatusCode == http.StatusCreated {
					built++
				} else {
					shared++
				}
				mu.Unlock()
			}
		}()
	}
	// The command line, sharing an engine cache of its own, builds the toggled name too: it
	// follows the link as the user's own path, but each entry must be the engine of the model
	// its key was hashed from. Beside it, the folder of a model is exchanged with another
	// holding a model of the same name, as fast as the file system lets it.
	cliCache := filepath.Join(filepath.Dir(*stateDir), "race-cli-cache")
	folderCache := filepath.Join(filepath.Dir(*stateDir), "race-folder-cache")
	folders := filepath.Join(filepath.Dir(*stateDir), "race-folders")
	cliRuns := max(n/20, 5)
	var (
		cliBuilt, cliChanged, folderBuilt, folderChanged int
		cliProblems, folderProblems                      []string
		folderSwaps                                      atomic.Int64
	)
	folderStop := make(chan struct{})
	folderDone := make(chan struct{})
	if tb != "" {
		os.RemoveAll(folders)
		for dir, data := range map[string][]byte{"models": insideData, "other": nil} {
			if err := os.MkdirAll(filepath.Join(folders, dir), 0o755); err != nil {
				fmt.Fprintln(os.Stderr, "serveattack:", err)
				os.Exit(1)
			}
			if data == nil {
				if data, err = os.ReadFile(outside); err != nil {
					fmt.Fprintln(os.Stderr, "serveattack:", err)
					os.Exit(1)
				}
			}
			if err := os.WriteFile(filepath.Join(folders, dir, "victim.onnx"), data, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "serveattack:", err)
				os.Exit(1)
			}
		}
		go func() {
			folderToggler(filepath.Join(folders, "models"), filepath.Join(folders, "other"), folderStop, &folderSwaps)
			close(folderDone)
		}()
		wg.Add(2)
		go func() {
			defer wg.Done()
			cliBuilt, cliChanged, cliProblems = cliRace(tb, name, cliCache, filepath.Join(filepath.Dir(*stateDir), "race-cli.engine"), cliRuns)
		}()
		go func() {
			defer wg.Done()
			folderBuilt, folderChanged, folderProblems = cliRace(tb, filepath.Join(folders, "models", "victim.onnx"), folderCache, filepath.Join(filepath.Dir(*stateDir), "race-folder.engine"), cliRuns)
		}()
	} else {
		close(folderDone)
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(stop)
	close(folderStop)
	<-done
	<-folderDone

	result(fmt.Sprintf("model race: %d submits while the name was swapped %d times: nothing from outside the root", n, swaps.Load()),
		len(problems) == 0, "%d built, %d shared or cached, %d refused, %d other; %s", built, shared, refused, other, strings.Join(problems, "; "))
	bad := cacheEntriesNotOf(filepath.Join(*stateDir, "engines"), int64(len(insideData)))
	result("model race: every engine cache entry of the server is the model inside the root", len(bad) == 0, "%s", strings.Join(bad, "; "))
	if tb != "" {
		bad := cacheEntriesInconsistent(cliCache)
		result(fmt.Sprintf("model race: %d command-line builds (%d built, %d refused as changed): each cache entry is the engine of its key's model", cliRuns, cliBuilt, cliChanged),
			len(bad) == 0 && len(cliProblems) == 0, "%s %s", strings.Join(bad, "; "), strings.Join(cliProblems, "; "))
		bad = cacheEntriesInconsistent(folderCache)
		result(fmt.Sprintf("model race: %d command-line builds while the model's folder was exchanged %d times (%d built, %d refused as changed): each cache entry is the engine of its key's model", cliRuns, folderSwaps.Load(), folderBuilt, folderChanged),
			len(bad) == 0 && len(folderProblems) == 0, "%s %s", strings.Join(bad, "; "), strings.Join(folderProblems, "; "))
	}
}

// engineOf fetches build id's engine and reads its simulated plan.
func engineOf(id string) (simulatedPlan, error) {
	resp, err := hc.Get(*base + "/v1/builds/" + id + "/engine")
	if err != nil {
		return simulatedPlan{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return simulatedPlan{}, fmt.Errorf("GET engine: %s", resp.Status)
	}
	return readPlan(data)
}

// cacheEntries are the engine files of an engine cache and their manifests.
func cacheEntries(dir string) map[string]string {
	out := map[string]string{}
	engines, _ := filepath.Glob(filepath.Join(dir, "entries", "*", "engine"))
	for _, e := range engines {
		out[e] = filepath.Join(filepath.Dir(e), "manifest.json")
	}
	return out
}

// cacheEntriesNotOf lists the entries whose engine is of a model of another size than bytes.
func cacheEntriesNotOf(dir string, bytes int64) []string {
	var bad []string
	for engine := range cacheEntries(dir) {
		data, err := os.ReadFile(engine)
		if err != nil {
			continue
		}
		if p, err := readPlan(data); err != nil || p.modelBytes != bytes {
			bad = append(bad, fmt.Sprintf("%s holds an engine of a model of %d bytes", filepath.Base(filepath.Dir(engine)), p.modelBytes))
		}
	}
	return bad
}

// cacheEntriesInconsistent lists the entries whose engine is not of the model their manifest
// (and so their key) describes.
func cacheEntriesInconsistent(dir string) []string {
	var bad []string
	for engine, manifest := range cacheEntries(dir) {
		data, err := os.ReadFile(engine)
		if err != nil {
			continue
		}
		m, err := os.ReadFile(manifest)
		if err != nil {
			continue
		}
		var desc struct {
			Model struct {
				Bytes int64 `json:"bytes"`
			} `json:"model"`
		}
		p, perr := readPlan(data)
		if json.Unmarshal(m, &desc) != nil || perr != nil || p.modelBytes != desc.Model.Bytes {
			bad = append(bad, fmt.Sprintf("%s: the engine is of a model of %d bytes, its key of one of %d", filepath.Base(filepath.Dir(engine)), p.modelBytes, desc.Model.Bytes))
		}
	}
	return bad
}
