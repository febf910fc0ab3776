package main

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"strings"
)

// writeChart draws results as grouped bars, Weir and Flink side by side
// per query and checkpoint setting, with the standard library only (a
// 5×7 bitmap font is drawn by hand).
func writeChart(path string, rows []Row) error {
	img := drawChart(rows)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var (
	weirColor  = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	flinkColor = color.RGBA{0xff, 0x7f, 0x0e, 0xff}
	gridColor  = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	inkColor   = color.RGBA{0x22, 0x22, 0x22, 0xff}
)

const (
	chartScale  = 2 // pixels per font pixel
	marginLeft  = 110
	marginRight = 30
	marginTop   = 70
	marginBot   = 60
	plotHeight  = 420
	barWidth    = 14
	groupGap    = 18
)

func drawChart(rows []Row) *image.RGBA {
	const title = "NEXMARK: EVENTS / S / CORE (HIGHER IS BETTER)"
	groupW := 2*barWidth + groupGap
	w := max(marginLeft+marginRight+max(len(rows), 1)*groupW, marginLeft+textWidth(title)+marginRight)
	h := marginTop + plotHeight + marginBot
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(img, img.Bounds(), color.White)
	top := 0.0
	for _, r := range rows {
		top = math.Max(top, math.Max(r.Weir.EventsPerCoreSecond(r.Events), r.Flink.EventsPerCoreSecond(r.Events)))
	}
	step := niceStep(top / 5)
	top = math.Max(step*math.Ceil(top/step), step)
	y0 := marginTop + plotHeight
	for v := 0.0; v <= top+step/2; v += step {
		y := y0 - int(v/top*plotHeight)
		fill(img, image.Rect(marginLeft, y, w-marginRight, y+1), gridColor)
		label := strings.ToUpper(strings.Replace(human(v), ".0", "", 1))
		text(img, marginLeft-8-textWidth(label), y-7, label, inkColor)
	}
	text(img, marginLeft, 16, title, inkColor)
	legend(img, marginLeft, 42)
	for i, r := range rows {
		x := marginLeft + groupGap/2 + i*groupW
		bar(img, x, y0, r.Weir.EventsPerCoreSecond(r.Events)/top, weirColor)
		bar(img, x+barWidth, y0, r.Flink.EventsPerCoreSecond(r.Events)/top, flinkColor)
		label := strings.ToUpper(r.Query)
		text(img, x+barWidth-textWidth(label)/2, y0+8, label, inkColor)
		if r.Checkpoint != "off" {
			c := strings.ToUpper(r.Checkpoint)
			text(img, x+barWidth-textWidth(c)/2, y0+28, c, inkColor)
		}
	}
	fill(img, image.Rect(marginLeft, y0, w-marginRight, y0+2), inkColor)
	return img
}

func legend(img *image.RGBA, x, y int) {
	fill(img, image.Rect(x, y, x+14, y+14), weirColor)
	text(img, x+20, y, "WEIR", inkColor)
	x += 20 + textWidth("WEIR") + 24
	fill(img, image.Rect(x, y, x+14, y+14), flinkColor)
	text(img, x+20, y, "FLINK", inkColor)
}

func bar(img *image.RGBA, x, y0 int, frac float64, c color.Color) {
	if frac <= 0 {
		return
	}
	fill(img, image.Rect(x, y0-int(frac*plotHeight), x+barWidth-2, y0), c)
}

// niceStep rounds x up to 1, 2 or 5 × a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.Set(x, y, c)
		}
	}
}

func textWidth(s string) int { return len(s) * 6 * chartScale }

// text draws s (upper case, digits and a little punctuation) with its top
// left corner at (x, y).
func text(img *image.RGBA, x, y int, s string, c color.Color) {
	for _, r := range s {
		g, ok := glyphs[r]
		if !ok {
			g = glyphs['?']
		}
		for row, bits := range g {
			for col, b := range bits {
				if b == '#' {
					fill(img, image.Rect(x+col*chartScale, y+row*chartScale, x+(col+1)*chartScale, y+(row+1)*chartScale), c)
				}
			}
		}
		x += 6 * chartScale
	}
}

// glyphs is a 5×7 font.
var glyphs = map[rune][7]string{
	' ': {".....", ".....", ".....", ".....", ".....", ".....", "....."},
	'?': {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."},
	'0': {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
	'1': {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'2': {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
	'3': {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."},
	'4': {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
	'5': {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
	'6': {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
	'7': {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
	'8': {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
	'9': {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
	'A': {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},
	'B': {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."},
	'C': {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."},
	'D': {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."},
	'E': {"#####", "#....", "#....", "####.", "#....", "#....", "#####"},
	'F': {"#####", "#....", "#....", "####.", "#....", "#....", "#...."},
	'G': {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"},
	'H': {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},
	'I': {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'J': {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."},
	'K': {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"},
	'L': {"#....", "#....", "#....", "#....", "#....", "#....", "#####"},
	'M': {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"},
	'N': {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"},
	'O': {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},
	'P': {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."},
	'Q': {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"},
	'R': {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"},
	'S': {".####", "#....", "#....", ".###.", "....#", "....#", "####."},
	'T': {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."},
	'U': {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},
	'V': {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."},
	'W': {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."},
	'X': {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"},
	'Y': {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."},
	'Z': {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"},
	'.': {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."},
	',': {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."},
	'/': {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."},
	'-': {".....", ".....", ".....", "#####", ".....", ".....", "....."},
	':': {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."},
	'(': {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."},
	')': {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."},
}
