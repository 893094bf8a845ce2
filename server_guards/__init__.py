"""What every server of the arena puts in front of its routes (`arena web`, `arena serve-env`,
`arena serve-model`): the Host and Origin checks (`origins`), refusal of deeply nested JSON
(`json_depth`) and fair shares of session slots between clients (`client_slots`).

The package knows no game, model or store, so each server, whatever its layer, may import it."""
