{
  "targets": [
    {
      "target_name": "kwire_crc32c",
      "sources": ["native/crc32c.c"],
      "cflags": ["-O3"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3"] }
    },
    {
      "target_name": "kwire_lz4",
      "sources": ["native/lz4.c"],
      "cflags": ["-O3"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3"] }
    }
  ]
}
