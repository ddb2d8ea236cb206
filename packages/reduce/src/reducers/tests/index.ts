import type { Reducer } from "../../Reducer.ts"
import { bunTest } from "./bunTest.ts"
import { cargoTest } from "./cargoTest.ts"
import { goTest } from "./goTest.ts"
import { jest } from "./jest.ts"
import { nodeTest } from "./nodeTest.ts"
import { pytest } from "./pytest.ts"
import { unittest } from "./unittest.ts"
import { vitest } from "./vitest.ts"

/**
 * Test-runner reducers, most specific first: each is chosen by the command or by sniffing the
 * output, and declines (returns undefined) when it finds none of its runner's lines.
 */
export const testReducers: ReadonlyArray<Reducer> = [goTest, cargoTest, pytest, unittest, vitest, jest, bunTest, nodeTest]
