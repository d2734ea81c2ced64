package svgchart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// Mark is a drawn point or bar as read back from an SVG: its data
// attributes (without the data- prefix) and its <title>.
type Mark struct {
	// Kind is "point" (LineChart), "bar" (BarChart) or "event"
	// (TimelineChart).
	Kind string
	// Series is the name of the series or lane the mark belongs to.
	Series string
	Data   map[string]string
	Title  string
}

// Marks parses svg as XML to its end, so that a document that is not
// well-formed is an error, and returns its points, bars and events in document
// order. The reports' tests check with it that what is drawn is the
// report's figures.
func Marks(svg []byte) ([]Mark, error) {
	d := xml.NewDecoder(bytes.NewReader(svg))
	var (
		marks  []Mark
		groups []string // the data-name of every open <g>, "" for none
		cur    *Mark
		inTit  bool
		root   bool
	)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("SVG not well-formed: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !root {
				if t.Name.Local != "svg" || t.Name.Space != "http://www.w3.org/2000/svg" {
					return nil, fmt.Errorf("root element is %s %s, not an SVG", t.Name.Space, t.Name.Local)
				}
				root = true
			}
			class, data := "", map[string]string{}
			for _, a := range t.Attr {
				switch {
				case a.Name.Local == "class":
					class = a.Value
				case len(a.Name.Local) > 5 && a.Name.Local[:5] == "data-":
					data[a.Name.Local[5:]] = a.Value
				}
			}
			switch {
			case t.Name.Local == "g":
				groups = append(groups, data["name"])
			case class == "point" || class == "bar" || class == "event":
				series := ""
				if len(groups) > 0 {
					series = groups[len(groups)-1]
				}
				marks = append(marks, Mark{Kind: class, Series: series, Data: data})
				cur = &marks[len(marks)-1]
			case t.Name.Local == "title" && cur != nil:
				inTit = true
			}
		case xml.EndElement:
			switch {
			case t.Name.Local == "g" && len(groups) > 0:
				groups = groups[:len(groups)-1]
			case t.Name.Local == "title":
				inTit = false
			case t.Name.Local == "circle" || t.Name.Local == "rect":
				cur = nil
			}
		case xml.CharData:
			if inTit && cur != nil {
				cur.Title += string(t)
			}
		}
	}
	if !root {
		return nil, errors.New("no SVG element")
	}
	return marks, nil
}
