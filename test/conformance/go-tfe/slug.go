package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	slug "github.com/hashicorp/go-slug"
)

// slugEntry is one entry of the archive go-slug packs, as the slug command prints it.
type slugEntry struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Linkname string `json:"linkname,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
}

// slugMain packs a folder exactly as go-tfe's PolicySetVersions.Upload does (slug.Pack with links dereferenced) and
// prints its entries as JSON, or the packer's error; with a second argument it also writes the archive there, for
// the local server to read an archive made by go-slug itself. Usage: go-tfe-conformance slug <folder> [archive].
func slugMain(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: go-tfe-conformance slug <folder> [archive]")
		return 2
	}
	archive, err := os.CreateTemp("", "slug-*.tar.gz")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.Remove(archive.Name())
	if _, err := slug.Pack(args[0], archive, true); err != nil {
		printJSON(map[string]string{"error": err.Error()})
		return 0
	}
	if _, err := archive.Seek(0, io.SeekStart); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	entries, err := slugEntries(archive)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if len(args) > 1 {
		bytes, err := os.ReadFile(archive.Name())
		if err == nil {
			err = os.WriteFile(args[1], bytes, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	printJSON(map[string]any{"entries": entries})
	return 0
}

func slugEntries(archive io.Reader) ([]slugEntry, error) {
	gzipReader, err := gzip.NewReader(archive)
	if err != nil {
		return nil, err
	}
	reader := tar.NewReader(gzipReader)
	entries := []slugEntry{}
	for {
		header, err := reader.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
		entry := slugEntry{Name: header.Name}
		switch header.Typeflag {
		case tar.TypeDir:
			entry.Type = "dir"
		case tar.TypeSymlink:
			entry.Type = "symlink"
			entry.Linkname = header.Linkname
		case tar.TypeReg:
			entry.Type = "file"
			hash := sha256.New()
			if _, err := io.Copy(hash, reader); err != nil {
				return nil, err
			}
			entry.SHA256 = hex.EncodeToString(hash.Sum(nil))
		default:
			entry.Type = fmt.Sprintf("type %c", header.Typeflag)
		}
		entries = append(entries, entry)
	}
}

func printJSON(value any) {
	encoded, _ := json.Marshal(value)
	fmt.Println(string(encoded))
}
