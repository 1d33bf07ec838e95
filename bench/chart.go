package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

func chartable(s *Scenario) bool {
	for _, r := range s.Rows {
		if r.Failure == "" && r.Median[s.ChartMetric] > 0 {
			return true
		}
	}
	return false
}

// WriteChart draws a bar per system of the scenario's chart metric into root/ChartFile(s).
// Scenarios with nothing to draw get no chart.
func WriteChart(root string, s *Scenario) error {
	if !chartable(s) {
		return nil
	}
	p := plot.New()
	p.Title.Text = s.Title
	p.Y.Label.Text = columnTitles[s.ChartMetric]
	p.Y.Min = 0
	var names []string
	for _, r := range s.Rows {
		if r.Failure != "" {
			continue
		}
		bar, err := plotter.NewBarChart(plotter.Values{r.Median[s.ChartMetric]}, vg.Points(36))
		if err != nil {
			return fmt.Errorf("bench: chart %s: %w", s.Name, err)
		}
		// One chart per system, at its own x, so that each system keeps its colour.
		bar.XMin = float64(len(names))
		bar.Color = plotutil.Color(len(names))
		bar.LineStyle.Width = 0
		p.Add(bar)
		name := r.System
		if r.Note != "" {
			name += "\n" + r.Note
		}
		names = append(names, name)
	}
	p.NominalX(names...)
	file := filepath.Join(root, ChartFile(s))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	if err := p.Save(vg.Length(max(4, len(names)*2))*vg.Inch, 3.5*vg.Inch, file); err != nil {
		return fmt.Errorf("bench: chart %s: %w", s.Name, err)
	}
	return nil
}
