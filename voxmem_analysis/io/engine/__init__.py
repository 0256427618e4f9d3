"""The reader skeleton every input goes through: files, the record front end with its key census, the
value encoding, the rule engine and the parsed-release cache."""
