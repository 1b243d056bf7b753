"""Test connection: one small real request through a stored configuration.

Above both the configuration package (it resolves the stored row, key decrypted) and the
client (it sends the request), so neither needs the other.
"""
