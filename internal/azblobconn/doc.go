// Package azblobconn holds what lockers/azblob and resources/azblob share
// about reaching Azure Blob Storage: the container, account and endpoint
// of an azblob URL (Parse), the container client built from the
// environment's credentials (Config.Client), and the one-line form of the
// service's error answers (OneLine).
package azblobconn
