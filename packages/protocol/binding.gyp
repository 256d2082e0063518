{
  "targets": [
    {
      "target_name": "kwire_crc32c",
      "sources": ["native/crc32c.c"],
      "cflags": ["-O3"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3"] }
    }
  ]
}
