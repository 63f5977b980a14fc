package main

import (
	"slices"
	"testing"
)

func TestChoosePass(t *testing.T) {
	got := choosePass([]string{"2C", "AC", "3H", "KH", "KS", "QS", "5D"})
	if want := []string{"QS", "KS", "KH"}; !slices.Equal(got, want) {
		t.Errorf("choosePass = %v, want %v", got, want)
	}
}

func TestChoosePlay(t *testing.T) {
	cases := []struct {
		name         string
		legal, trick []string
		want         string
	}{
		{"lead lowest", []string{"5C", "3D", "AS"}, nil, "3D"},
		{"duck under the winner", []string{"4C", "9C", "KC"}, []string{"TC", "2C"}, "9C"},
		{"cancel the winner", []string{"4C", "TC", "KC"}, []string{"TC", "2C"}, "TC"},
		{"cancelled card does not win", []string{"3C", "KC"}, []string{"AC", "AC", "5C"}, "3C"},
		{"must win: lowest", []string{"JC", "KC"}, []string{"TC"}, "JC"},
		{"void: Black Maria", []string{"2H", "QS", "AD"}, []string{"TC"}, "QS"},
		{"void: highest heart", []string{"2H", "JH", "AD"}, []string{"TC"}, "JH"},
		{"void: highest card", []string{"2D", "AD", "5S"}, []string{"TC"}, "AD"},
	}
	for _, c := range cases {
		if got := choosePlay(c.legal, c.trick); got != c.want {
			t.Errorf("%s: choosePlay(%v, %v) = %s, want %s", c.name, c.legal, c.trick, got, c.want)
		}
	}
}
