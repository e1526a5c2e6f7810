package progress

// Along is how far along a build is, in steps of its top phases: the completed steps of the
// newest root phase, plus the share of the step it is in that its open child phases have done
// (so an hour in the root's first step still moves), and the steps of earlier root phases
// before it (TensorRT's engine generations, one root after another); total is all their steps.
// A root that finished with all its steps, or built (the result said the engine was built:
// TensorRT ends its root before its last step), is all done; a build cut short stays where it
// was. ok is false before the first phase started. It is the one "how far" of every view: the
// taskbar's percentage, MCP's progress notifications.
func Along(t *Tree, built bool) (done, total float64, ok bool) {
	roots := t.Roots()
	if len(roots) == 0 {
		return 0, 0, false
	}
	for _, id := range roots[:len(roots)-1] {
		if r := t.Get(id); r != nil {
			total += float64(r.Steps)
		}
	}
	top := t.Get(roots[len(roots)-1])
	if top == nil {
		return 0, 0, false
	}
	done = total + stepsDone(t, top)
	total += float64(top.Steps)
	if top.Finished && !top.Early || built {
		done = total
	}
	return min(max(done, 0), total), total, true
}

// stepsDone is how many of ph's steps are done: its completed steps, plus the share of the
// newest open child, at most its step count.
func stepsDone(t *Tree, ph *Phase) float64 {
	v := float64(ph.Done)
	for i := len(ph.Children) - 1; i >= 0; i-- {
		if c := t.Get(ph.Children[i]); c != nil && !c.Finished && c.Steps > 0 {
			v += stepsDone(t, c) / float64(c.Steps)
			break
		}
	}
	return min(v, float64(ph.Steps))
}
