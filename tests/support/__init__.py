"""Helpers that tests share: real child processes (etcd) and what else several test folders need."""
