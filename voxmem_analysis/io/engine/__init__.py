"""The reader skeleton every input goes through: files (:mod:`.files`), the record front end
(:mod:`.records`, with the key census :mod:`.census`), the value encoding and its readings
(:mod:`.values`), the rule engine (:mod:`.rules`) and the parsed-release cache (:mod:`.cache`)."""
