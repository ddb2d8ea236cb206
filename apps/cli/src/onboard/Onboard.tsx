// The first-run setup's screens: pick a provider, paste its key (never shown), pick a model. Esc or Ctrl+C at any
// step ends it with nothing chosen; the caller writes only what a finished setup returns.
import { Box, Text, useApp, useInput } from "ink"
import { useRef, useState } from "react"
import { Picker } from "../tui/Picker.tsx"
import { useTheme } from "../tui/view/index.ts"
import type { ProviderChoice } from "./Choices.ts"

/** What a finished setup chose. */
export interface Chosen {
  readonly provider: ProviderChoice
  /** The key typed, when one was asked for. */
  readonly key?: string
  readonly model: string
}

/** The key prompt: what is typed is kept and counted, never drawn. Enter with nothing typed asks again. */
const KeyPrompt = (props: { readonly provider: string; readonly onKey: (key: string) => void; readonly onCancel: () => void }) => {
  const { style } = useTheme()
  const dim = style.color ? { dimColor: true } : {}
  const typed = useRef("")
  const [state, setState] = useState({ length: 0, empty: false })
  useInput((input, key) => {
    if (key.escape || (key.ctrl && input === "c")) return props.onCancel()
    if (key.backspace || key.delete) {
      typed.current = typed.current.slice(0, -1)
      return setState({ length: typed.current.length, empty: false })
    }
    if (key.ctrl || key.meta || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return
    // a pasted key can come with its Enter in the same chunk
    const [text = "", ...rest] = (key.return ? "\n" : input).split(/\r\n?|\n/)
    typed.current += text.replace(/[\x00-\x1f\x7f]/g, "")
    if (rest.length === 0) return setState({ length: typed.current.length, empty: false })
    const value = typed.current.trim()
    if (value === "") return setState({ length: 0, empty: true })
    props.onKey(value)
  })
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text>{`API key for ${props.provider} (stored in your data dir's auth.json, readable only by you):`}</Text>
      <Text>{`> ${state.length > 0 ? `(${state.length} characters, hidden)` : ""}`}</Text>
      {state.empty ? <Text>The key is empty: paste it, then press Enter.</Text> : null}
      <Text {...dim}>Enter save · Esc cancel</Text>
    </Box>
  )
}

type Step =
  | { readonly at: "provider" }
  | { readonly at: "key"; readonly provider: ProviderChoice }
  | { readonly at: "model"; readonly provider: ProviderChoice; readonly key?: string }

/** The setup's screens, calling `onDone` once with the choices, or with undefined when cancelled. */
export const Onboard = (props: {
  readonly providers: ReadonlyArray<ProviderChoice>
  readonly models: (provider: ProviderChoice) => ReadonlyArray<string>
  readonly onDone: (chosen: Chosen | undefined) => void
}) => {
  const app = useApp()
  const [step, setStep] = useState<Step>({ at: "provider" })
  const finish = (chosen: Chosen | undefined) => {
    props.onDone(chosen)
    app.exit()
  }
  const cancel = () => finish(undefined)
  const header = <Text>reins has no model yet. Choose a provider, and a model of it; they are saved in your reins config.</Text>
  if (step.at === "provider") {
    return (
      <Box flexDirection="column">
        {header}
        <Picker
          title="Provider"
          items={props.providers.map((p) => ({ label: p.id, detail: `${p.ready ? "✓ " : ""}${p.detail}`, value: p }))}
          onPick={(provider) => setStep(provider.ready || !provider.needsKey ? { at: "model", provider } : { at: "key", provider })}
          onCancel={cancel}
        />
      </Box>
    )
  }
  if (step.at === "key") {
    return (
      <Box flexDirection="column">
        {header}
        <KeyPrompt provider={step.provider.id} onKey={(key) => setStep({ at: "model", provider: step.provider, key })} onCancel={cancel} />
      </Box>
    )
  }
  const models = props.models(step.provider)
  if (models.length === 0) {
    return <NoModels provider={step.provider.id} onCancel={cancel} />
  }
  return (
    <Box flexDirection="column">
      {header}
      <Picker
        title={`Model of ${step.provider.id}`}
        items={models.map((m, i) => ({ label: m, ...(i === 0 ? { detail: "suggested" } : {}), value: m }))}
        onPick={(model) => finish({ provider: step.provider, model, ...(step.key !== undefined ? { key: step.key } : {}) })}
        onCancel={cancel}
      />
    </Box>
  )
}

const NoModels = (props: { readonly provider: string; readonly onCancel: () => void }) => {
  useInput(() => props.onCancel())
  return <Text>{`reins knows no models of ${props.provider}: add them under provider.${props.provider}.models in reins.json. Press any key.`}</Text>
}
