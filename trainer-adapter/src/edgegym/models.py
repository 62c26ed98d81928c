"""The wire protocol (v1) as pydantic models, one per schema in the server's
``openapi/openapi.json`` (``components.schemas``). A test checks every schema's
properties and required fields against these models, so a protocol change on the
server fails the Python tests until the models follow.

Request bodies forbid unknown fields, as the server does. Response bodies ignore
fields they do not know, so a newer server with additive changes still parses.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Response(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


Split = Literal["train", "eval"]
EpisodeStatus = Literal["active", "done", "closed", "expired"]
ErrorCode = Literal[
    "invalid_request",
    "malformed_json",
    "json_too_deep",
    "unauthorized",
    "origin_not_allowed",
    "host_not_allowed",
    "route_not_found",
    "env_not_found",
    "episode_not_found",
    "eval_not_found",
    "method_not_allowed",
    "turn_conflict",
    "episode_done",
    "episode_closed",
    "idempotency_key_reused",
    "eval_running",
    "env_version_mismatch",
    "fork_unavailable",
    "episode_expired",
    "sandbox_lost",
    "payload_too_large",
    "unsupported_media_type",
    "invalid_env_args",
    "task_out_of_range",
    "eval_too_large",
    "sandbox_build_failed",
    "invalid_message",
    "env_unavailable",
    "rate_limited",
    "internal_error",
    "service_unavailable",
    "sandbox_start_failed",
    # A score of a harness episode whose agent still runs (409): wait for it (``rollouts.harness.wait_done``).
    "agent_running",
    # Seats (docs/multi-agent.md): a step by a seat whose turn it is not (409, ``details.to_play``),
    # a step for a seat the environment plays, and the 4xx of bad seat requests.
    "not_your_turn",
    "seat_not_client",
    "unknown_seat",
    "unknown_policy",
    "seats_unsupported",
    "seat_required",
    "no_client_seat",
    # OpenEnv and ORS sessions: an action naming another seat than the session's, and a wire that cannot play self-play.
    "seat_mismatch",
    "client_seats_unsupported",
]


class TextPart(BaseModel):
    """A text content part (the array form of ``content``)."""

    type: Literal["text"]
    text: str


MessageContent = Union[str, list[TextPart]]


def content_text(content: MessageContent | None) -> str:
    """The text of a message's content, joining text parts; None reads as ""."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.text for part in content)


class ToolCallFunction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    arguments: str = Field(description="Arguments as a JSON-encoded object, exactly as the model wrote them.")


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    type: Literal["function"] = "function"
    function: ToolCallFunction


class SystemMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["system"] = "system"
    content: MessageContent
    name: str | None = None


class UserMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user"] = "user"
    content: MessageContent
    name: str | None = None


class AssistantMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["assistant"] = "assistant"
    content: MessageContent | None = None
    tool_calls: list[ToolCall] | None = None
    name: str | None = None
    reasoning_content: str | None = None


class ToolMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["tool"] = "tool"
    content: MessageContent
    tool_call_id: str = Field(min_length=1)
    name: str | None = None


ChatMessage = Annotated[
    Union[SystemMessage, UserMessage, AssistantMessage, ToolMessage],
    Field(discriminator="role"),
]


class ToolFunction(BaseModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any]
    strict: bool | None = None


class ToolDefinition(BaseModel):
    """An OpenAI function tool, ready to pass as ``tools`` to a chat template."""

    type: Literal["function"] = "function"
    function: ToolFunction


# --- environments -----------------------------------------------------------------


class RubricComponentInfo(_Response):
    name: str
    weight: float
    description: str | None = None
    group: bool


class SplitSizes(_Response):
    train: int | None
    eval: int | None


class Isolation(_Response):
    """How an environment that runs client-supplied code (python) is sandboxed on this server."""

    level: str
    detail: str
    # False: the server refuses to run the environment at this level (resets get env_unavailable).
    served: bool


class SeatInfo(_Response):
    """One seat of a multi-player environment (``EnvInfo.seats``)."""

    name: str
    description: str
    # ``"client"`` and/or the environment's policies that may play it.
    players: list[str]
    # Who plays it when a reset names no one.
    default: str
    # False for a seat nobody trains (a simulated user): trainers skip its trajectory.
    trainable: bool


class EnvInfo(_Response):
    id: str
    version: str
    # Content hash of the environment's code and data (docs/versions.md); None from older servers.
    hash: str | None = None
    description: str
    kind: Literal["single_turn", "multi_turn", "tool"]
    args_schema: dict[str, Any]
    tools: list[ToolDefinition]
    max_turns: int
    # Calls past it in one assistant message get an error tool message and are not run.
    max_tool_calls_per_message: int = 16
    splits: SplitSizes
    rubric: list[RubricComponentInfo]
    system_prompt: str | None
    answer_format: str | None
    isolation: Isolation | None = None
    # A multi-player environment's seats, in order; None for a one-player environment.
    seats: list[SeatInfo] | None = None
    # A multi-player environment's own players (a seat's ``players`` other than "client"), with what each does.
    policies: dict[str, str] | None = None

    def client_seats(self, seats: dict[str, str] | None = None) -> list[str]:
        """The seats a client plays under the reset assignment ``seats`` (seats left out take
        their default), in the environment's order; empty for a one-player environment."""
        given = seats or {}
        return [s.name for s in self.seats or [] if given.get(s.name, s.default) == "client"]


class EnvList(_Response):
    envs: list[EnvInfo]


class Example(_Response):
    index: int
    split: Split
    prompt: list[ChatMessage]
    answer: str | None
    info: dict[str, Any]


class ExamplePage(_Response):
    examples: list[Example]
    offset: int
    limit: int
    total: int | None


# --- harness episodes (an agent in the sandbox calls the model through the episode) ---

#: Stop reasons a harness episode ends with (the server's ``AGENT_STOP_REASONS``).
AGENT_STOP_REASONS = frozenset({"agent_exit", "agent_timeout", "call_limit", "token_limit", "sandbox_lost"})

_UPSTREAM_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class AgentLimits(_Request):
    """Per-episode limits of a harness agent; unset ones are the server's defaults."""

    # Model calls the agent may make; the next one ends the episode with ``call_limit``.
    max_calls: int | None = Field(default=None, ge=1, le=100_000)
    # Prompt plus completion tokens over all calls; past it the episode ends with ``token_limit``.
    max_tokens: int | None = Field(default=None, ge=1, le=10**9)


class AgentSpec(_Request):
    """``ResetRequest.agent``: run an agent program in the episode's sandbox (a sandboxed
    environment such as ``harbor``). The episode is active while it runs and done when it
    exits; each model call it makes through the episode's endpoint is a turn."""

    # ``sh -c`` command in the container; it reads OPENAI_BASE_URL / ANTHROPIC_BASE_URL and EDGEGYM_INSTRUCTION.
    command: str = Field(min_length=1, max_length=16_384)
    # An upstream the operator named in EDGEGYM_MODEL_UPSTREAMS.
    upstream: str = Field(pattern=_UPSTREAM_NAME)
    # The model name sent upstream, whatever the agent asks for.
    model: str = Field(min_length=1, max_length=256)
    timeout_seconds: int = Field(ge=1, le=86_400)
    limits: AgentLimits | None = None


class ModelEndpoint(_Response):
    """The episode's model endpoint, in a harness reset's reply. ``api_key`` is returned
    once (only its hash is stored) and opens this episode's endpoint while it is active."""

    openai_base_url: str
    anthropic_base_url: str
    api_key: str


ModelWire = Literal["chat", "responses", "messages"]


class ModelCallUsage(_Response):
    prompt_tokens: int
    completion_tokens: int


class ModelCall(_Response):
    """One model call of a harness episode (``EpisodeTurn.call``), as it went through the
    episode's endpoint: the agent's request and the answer it got (assembled when streamed)."""

    wire: ModelWire
    upstream: str
    model: str
    stream: bool
    request: dict[str, Any]
    response: dict[str, Any] | None
    status: int
    error: str | None
    usage: ModelCallUsage | None
    latency_ms: float

    @property
    def ok(self) -> bool:
        """A 2xx answer without an error."""
        return self.error is None and 200 <= self.status < 300


AgentStatus = Literal["running", "exited", "timed_out", "stopped", "lost"]


class AgentRun(_Response):
    """``Episode.agent``: the agent of a harness episode. ``stopped``: ended by a limit or a
    close; ``lost``: its container went away."""

    upstream: str
    model: str
    status: AgentStatus
    exit_code: int | None
    # The last bytes of its stdout and stderr (up to 16 KiB).
    output_tail: str
    # How long it ran; None while it runs.
    seconds: float | None
    calls: int
    tokens: int
    started_at: str


class ModelRequest(BaseModel):
    """A request to an episode's model endpoint, in the wire's own format (OpenAI Chat
    Completions, OpenAI Responses or Anthropic Messages): free-form."""

    model_config = ConfigDict(extra="allow")


class ModelAnswer(BaseModel):
    """The endpoint's answer, in the wire's own format: free-form."""

    model_config = ConfigDict(extra="allow")


class ModelError(BaseModel):
    """An endpoint error in the agent's wire's own shape (OpenAI's or Anthropic's): free-form."""

    model_config = ConfigDict(extra="allow")


# --- episodes ---------------------------------------------------------------------


class ResetRequest(_Request):
    split: Split | None = None
    index: int | None = Field(default=None, ge=0)
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1)
    args: dict[str, Any] | None = None
    ttl_seconds: int | None = Field(default=None, ge=1)
    metadata: dict[str, Any] | None = None
    # A harness episode: an agent runs in the sandbox (the reply carries ``model_endpoint``).
    agent: AgentSpec | None = None
    # A seated environment's: who plays each seat, "client" or one of the environment's policies.
    seats: dict[str, str] | None = None


class _EpisodeOrigin(_Response):
    """Which episode, of which environment and task: the fields a reset's reply and an
    episode read both open with."""

    episode_id: str
    env_id: str
    env_version: str
    # This server sends it on reset; None in a read of an episode stored before content
    # hashes were recorded, or from a server that predates them.
    env_hash: str | None = None
    split: Split
    index: int
    seed: int


class ResetResponse(_EpisodeOrigin):
    # ``model_endpoint`` is in pydantic's protected ``model_`` namespace before 2.10: no warning.
    model_config = ConfigDict(extra="ignore", protected_namespaces=())

    turn: int
    messages: list[ChatMessage]
    tools: list[ToolDefinition]
    done: bool
    max_turns: int
    expires_at: str
    # With ``agent``: the episode's endpoint and its key (the agent gets its own URLs to it).
    model_endpoint: ModelEndpoint | None = None
    # A seated episode's: the seat that moves next (``messages`` is its opening); None for a
    # one-player episode, and once a seated one is done.
    to_play: str | None = None


class SampledTokens(_Request):
    """What the trainer sampled for a step's assistant message (sent with the step, returned
    per turn), or what a harness episode's vLLM upstream returned for a model call (then
    with ``prompt_token_ids`` and without ``template_hash``)."""

    token_ids: list[int] = Field(max_length=131_072)
    logprobs: list[float] | None = Field(default=None, max_length=131_072)
    # Sent with every step the trainer samples; absent on a harness episode's call turns.
    template_hash: str | None = Field(default=None, min_length=1, max_length=128)
    # The prompt's token ids as the sampler saw them (harness episodes, vLLM upstream).
    prompt_token_ids: list[int] | None = Field(default=None, max_length=131_072)


class TemplateChange(_Response):
    turn: int
    # ``from`` is a Python keyword: the field is ``from_`` with the wire name as its alias.
    from_: str = Field(alias="from")
    to: str


class StepRequest(_Request):
    turn: int = Field(ge=0)
    message: AssistantMessage
    sampled: SampledTokens | None = None
    # A seated episode's: the seat this message is for (default: the only seat a client plays).
    seat: str | None = Field(default=None, min_length=1, max_length=32)


class StepResponse(_Response):
    episode_id: str
    turn: int
    messages: list[ChatMessage]
    done: bool
    stop_reason: str | None
    truncated: bool
    expires_at: str
    template_change: TemplateChange | None = None
    # A seated episode's: the seat that moves next (``messages`` is what it sees next), None once done.
    to_play: str | None = None


class ScoreComponent(_Response):
    name: str
    weight: float
    score: float
    error: str | None = None


#: Codes a score component's ``error`` starts with when the rollout could not be scored at
#: all (a sandboxed task's verifier timed out, wrote no reward, lost its container; a rubric ran
#: past the server's scoring time budget): the 0 is not one the agent earned, so it is masked
#: rather than trained on. The server's list: ``SCORE_FAILURE_CODES`` in src/protocol/episodes.ts.
SCORE_FAILURE_CODES = frozenset({"verifier_timeout", "reward_file_missing", "reward_file_empty", "reward_file_invalid", "sandbox_lost", "score_timeout"})


def _score_failure(components: list[ScoreComponent]) -> str | None:
    for c in components:
        if c.weight and c.error and c.error.split(":", 1)[0] in SCORE_FAILURE_CODES:
            return c.error
    return None


class SeatScore(_Response):
    """One seat's score: the rubric run over that seat's own conversation."""

    reward: float
    components: list[ScoreComponent]
    metrics: dict[str, float]

    @property
    def failure(self) -> str | None:
        """As ``Score.failure``, for this seat's components."""
        return _score_failure(self.components)


class Score(_Response):
    reward: float
    components: list[ScoreComponent]
    metrics: dict[str, float]
    # A seated episode's score per seat (the environment's policies' seats too). The top-level
    # reward is then the first client seat's.
    seats: dict[str, SeatScore] | None = None

    @property
    def failure(self) -> str | None:
        """The error of the first weighted component that could not be scored (``"verifier_timeout: …"``), else None."""
        return _score_failure(self.components)


class ScoreResponse(_Response):
    episode_id: str
    score: Score
    scored_at: str


class EpisodeParent(_Response):
    episode_id: str
    turn: int


class EpisodeTurn(_Response):
    turn: int
    message_count: int
    sampled: SampledTokens | None
    # A harness episode's model call that made this turn (t >= 1).
    call: ModelCall | None = None
    created_at: str


class Episode(_EpisodeOrigin):
    args: dict[str, Any]
    status: EpisodeStatus
    turn: int
    max_turns: int
    done: bool
    stop_reason: str | None
    truncated: bool
    error: str | None
    messages: list[ChatMessage]
    # Defaults for servers from before per-turn storage, which send the whole transcript only.
    from_turn: int = 0
    next_from_turn: int | None = None
    turns: list[EpisodeTurn] = []
    template_changes: list[TemplateChange] = []
    parent: EpisodeParent | None = None
    tools: list[ToolDefinition]
    # A seated episode's: who plays each seat, as recorded at reset.
    seats: dict[str, str] | None = None
    # The seat whose view ``messages`` is (a read with ``seat``).
    seat: str | None = None
    # A seated episode's: the seat that moves next; None once done (and for a one-player episode).
    to_play: str | None = None
    score: Score | None
    # A harness episode's agent: status, exit code, output tail, time.
    agent: AgentRun | None = None
    metadata: dict[str, Any]
    created_at: str
    updated_at: str
    expires_at: str


class CloseResponse(_Response):
    episode_id: str
    status: EpisodeStatus


RescoreRubric = Literal["episode", "current"]


class RescoreRequest(_Request):
    # "episode": the rubric the episode was started on (409 env_version_mismatch when the
    # server no longer runs it); "current": the rubric of the version the server runs now.
    rubric: RescoreRubric = "episode"
    # Replace the stored score with the new one; by default it is left as it is.
    save: bool = False


class RescoreResponse(_Response):
    episode_id: str
    score: Score
    previous_score: Score | None
    rubric: RescoreRubric
    env_version: str
    env_hash: str
    episode_env_version: str
    episode_env_hash: str | None
    saved: bool
    scored_at: str


class ForkRequest(_Request):
    turn: int | None = Field(default=None, ge=0)
    n: int | None = Field(default=None, ge=1, le=64)
    ttl_seconds: int | None = Field(default=None, ge=1)
    metadata: dict[str, Any] | None = None


class ForkedEpisode(_Response):
    episode_id: str
    expires_at: str


class ForkResponse(_Response):
    parent: EpisodeParent
    episodes: list[ForkedEpisode]
    turn: int
    max_turns: int
    tools: list[ToolDefinition]


class EpisodeFork(_Response):
    episode_id: str
    fork_turn: int
    turn: int
    status: EpisodeStatus
    reward: float | None
    created_at: str


class ForkList(_Response):
    episode_id: str
    forks: list[EpisodeFork]
    next_cursor: str | None


# --- stateless scoring ------------------------------------------------------------


class ScoreItem(_Request):
    prompt: str | list[ChatMessage]
    completion: str | list[ChatMessage]
    answer: str | None = None
    info: dict[str, Any] | None = None
    group: str | None = None
    # A multi-player environment's: the seat whose conversation prompt and completion are.
    seat: str | None = Field(default=None, min_length=1, max_length=32)


class ScoreCompletionsRequest(_Request):
    items: list[ScoreItem] = Field(min_length=1, max_length=1024)
    args: dict[str, Any] | None = None
    scale_advantages: bool = False


class ScoredItem(_Response):
    index: int
    group: str | None
    score: Score
    advantage: float | None


class GroupStats(_Response):
    group: str
    size: int
    mean: float
    std: float


class ScoreCompletionsResponse(_Response):
    env_id: str
    results: list[ScoredItem]
    groups: list[GroupStats]


# --- evaluation jobs --------------------------------------------------------------

EvalStatus = Literal["queued", "running", "completed", "failed", "cancelled"]

#: Statuses after which a job changes no more.
EVAL_TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class EvalRequest(_Request):
    """Options of an evaluation job (``POST /v1/evals``), the flags of ``edgegym eval``.

    Unset options are left out of the body, so the server applies its own defaults
    (5 rows, 3 rollouts each, 32 in flight, seed 0, …). The model endpoint and its key
    are not options: they come from the server's configuration and are never sent back.
    """

    env_id: str = Field(min_length=1)
    model: str | None = Field(default=None, min_length=1)
    num_examples: int | None = Field(default=None, ge=-1, description="Rows from index 0; -1 for every row of the split.")
    rollouts_per_example: int | None = Field(default=None, ge=1, le=1024)
    max_concurrent: int | None = Field(default=None, ge=1, le=4096)
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0)
    sampling_args: dict[str, Any] | None = None
    env_args: dict[str, Any] | None = None
    split: Split | None = None
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1)
    max_retries: int | None = Field(default=None, ge=0, le=20)
    timeout_seconds: float | None = Field(default=None, gt=0, le=3600)
    pass_threshold: float | None = None

    @field_validator("num_examples")
    @classmethod
    def _not_zero(cls, value: int | None) -> int | None:
        if value == 0:
            raise ValueError("num_examples must be positive, or -1 for every row of the split")
        return value


class EvalOptions(_Response):
    """A job's options as the server echoes them: the request with its defaults filled in."""

    env_id: str
    model: str | None = None
    num_examples: int = 5
    rollouts_per_example: int = 3
    max_concurrent: int = 32
    max_tokens: int | None = None
    temperature: float | None = None
    sampling_args: dict[str, Any] | None = None
    env_args: dict[str, Any] | None = None
    split: Split | None = None
    seed: int = 0
    max_retries: int = 3
    timeout_seconds: float = 600
    pass_threshold: float = 0.5


class EvalProgress(_Response):
    total: int
    done: int
    errors: int
    mean_reward: float | None
    rollouts_per_second: float | None


class EvalRewardStats(_Response):
    mean: float
    std: float
    min: float
    max: float


class EvalComponentMean(_Response):
    name: str
    weight: float
    mean: float


class EvalUsageSummary(_Response):
    input_tokens: float
    output_tokens: float
    mean_input_tokens: float
    mean_output_tokens: float


class EvalSpread(_Response):
    min: float
    mean: float
    max: float


class EvalTimingSummary(_Response):
    generation_ms: EvalSpread
    env_ms: EvalSpread
    scoring_ms: EvalSpread
    total_ms: EvalSpread


class EvalHistogramBin(_Response):
    lo: float
    hi: float
    count: int


class EvalSummary(_Response):
    """The figures of ``edgegym eval``'s closing summary (vf-eval's names where it has them)."""

    rollouts: int
    errors: int
    error_rate: float
    errors_by_code: dict[str, int]
    reward: EvalRewardStats
    components: list[EvalComponentMean]
    metrics: dict[str, float]
    pass_threshold: float
    pass_at_k: dict[str, float]
    pass_all_k: dict[str, float]
    stop_conditions: dict[str, int]
    model_length_stops: int
    usage: EvalUsageSummary
    timing: EvalTimingSummary
    histogram: list[EvalHistogramBin]
    wall_ms: float
    rollouts_per_second: float


class EvalJob(_Response):
    eval_id: str
    status: EvalStatus
    env_id: str
    env_version: str
    model: str
    request: EvalOptions
    progress: EvalProgress
    summary: EvalSummary | None
    error: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None

    @property
    def ended(self) -> bool:
        """True once the job is completed, failed or cancelled."""
        return self.status in EVAL_TERMINAL


class EvalDeleteResponse(_Response):
    """The answer to ``DELETE /v1/evals/{id}``: the job and its rollouts are gone."""

    eval_id: str
    deleted: Literal[True]
    rollouts_deleted: int


class EvalJobList(_Response):
    evals: list[EvalJob]


class EvalProgressEvent(_Response):
    """``data`` of a ``progress`` server-sent event."""

    eval_id: str
    status: EvalStatus
    progress: EvalProgress


class EvalStreamProgress(_Response):
    """A ``progress`` server-sent event as the OpenAPI document describes it: ``data`` is the JSON of an EvalProgressEvent."""

    event: Literal["progress"]
    data: str
    id: str


class EvalStreamDone(_Response):
    """The last server-sent event, ``done``: ``data`` is the JSON of the finished EvalJob."""

    event: Literal["done"]
    data: str
    id: str


class EvalRolloutError(_Response):
    error: str
    error_chain_str: str
    error_chain_repr: str
    attempts: int


class EvalTiming(_Response):
    start_time: float
    generation_ms: float
    env_ms: float
    scoring_ms: float
    total_ms: float


class EvalTokenUsage(_Response):
    input_tokens: float
    output_tokens: float


class EvalRollout(_Response):
    """One rollout: a line of ``results.jsonl`` in verifiers' ``vf-eval`` field names.

    Loose, as on the server: each metric is repeated as a top-level number (verifiers
    does so), and those keys are kept in ``model_extra``.
    """

    model_config = ConfigDict(extra="allow")

    example_id: int
    rollout_index: int
    task: str
    prompt: list[ChatMessage]
    completion: list[ChatMessage]
    answer: str | None = None
    info: dict[str, Any]
    reward: float
    metrics: dict[str, float]
    components: list[ScoreComponent]
    stop_condition: str | None
    is_completed: bool
    is_truncated: bool
    finish_reasons: list[str]
    error: EvalRolloutError | None
    timing: EvalTiming
    token_usage: EvalTokenUsage
    seed: int
    episode_id: str | None
    tool_defs: list[ToolDefinition] | None = None


class Health(_Response):
    status: Literal["ok"]
    version: str
    runtime: str
    # Per environment that runs client-supplied code (python): the sandbox in force.
    isolation: dict[str, Isolation] | None = None


class ErrorDetail(_Response):
    code: str
    message: str
    request_id: str
    details: Any = None


class ErrorBody(_Response):
    error: ErrorDetail


#: The OpenAPI component each model stands for (the schema-match test reads this).
SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "Health": Health,
    "Isolation": Isolation,
    "EnvList": EnvList,
    "EnvInfo": EnvInfo,
    "SeatInfo": SeatInfo,
    "ToolDefinition": ToolDefinition,
    "RubricComponentInfo": RubricComponentInfo,
    "Error": ErrorBody,
    "ExamplePage": ExamplePage,
    "Example": Example,
    "SystemMessage": SystemMessage,
    "UserMessage": UserMessage,
    "AssistantMessage": AssistantMessage,
    "ToolCall": ToolCall,
    "ToolMessage": ToolMessage,
    "ResetResponse": ResetResponse,
    "ResetRequest": ResetRequest,
    "StepResponse": StepResponse,
    "StepRequest": StepRequest,
    "Episode": Episode,
    "EpisodeParent": EpisodeParent,
    "EpisodeTurn": EpisodeTurn,
    "SampledTokens": SampledTokens,
    "TemplateChange": TemplateChange,
    "ForkRequest": ForkRequest,
    "ForkedEpisode": ForkedEpisode,
    "ForkResponse": ForkResponse,
    "EpisodeFork": EpisodeFork,
    "ForkList": ForkList,
    "Score": Score,
    "SeatScore": SeatScore,
    "ScoreComponent": ScoreComponent,
    "CloseResponse": CloseResponse,
    "RescoreRequest": RescoreRequest,
    "RescoreResponse": RescoreResponse,
    "ScoreResponse": ScoreResponse,
    "ScoreCompletionsResponse": ScoreCompletionsResponse,
    "ScoredItem": ScoredItem,
    "GroupStats": GroupStats,
    "ScoreCompletionsRequest": ScoreCompletionsRequest,
    "ScoreItem": ScoreItem,
    "EvalRequest": EvalRequest,
    "EvalJob": EvalJob,
    "EvalJobList": EvalJobList,
    "EvalDeleteResponse": EvalDeleteResponse,
    "EvalProgress": EvalProgress,
    "EvalProgressEvent": EvalProgressEvent,
    "EvalStreamProgress": EvalStreamProgress,
    "EvalStreamDone": EvalStreamDone,
    "EvalRollout": EvalRollout,
    "EvalRolloutError": EvalRolloutError,
    "EvalTiming": EvalTiming,
    "EvalTokenUsage": EvalTokenUsage,
    "AgentSpec": AgentSpec,
    "AgentLimits": AgentLimits,
    "ModelEndpoint": ModelEndpoint,
    "ModelCall": ModelCall,
    "AgentRun": AgentRun,
    "ModelRequest": ModelRequest,
    "ModelAnswer": ModelAnswer,
    "ModelError": ModelError,
}

#: Schemas that are unions of models rather than objects: each member is checked.
SCHEMA_UNIONS: dict[str, tuple[type[BaseModel], ...]] = {
    "ChatMessage": (SystemMessage, UserMessage, AssistantMessage, ToolMessage),
    "EvalStreamEvent": (EvalStreamProgress, EvalStreamDone),
}

#: Nested objects inside a schema that have their own model here: (schema, property path) -> model.
#: A path goes through properties with dots; ``[]`` after a name steps into an array's items.
NESTED_MODELS: dict[tuple[str, str], type[BaseModel]] = {
    ("EnvInfo", "splits"): SplitSizes,
    ("ToolDefinition", "function"): ToolFunction,
    ("ToolCall", "function"): ToolCallFunction,
    ("Error", "error"): ErrorDetail,
    ("EvalJob", "request"): EvalOptions,
    ("EvalJob", "summary"): EvalSummary,
    ("EvalJob", "summary.reward"): EvalRewardStats,
    ("EvalJob", "summary.components[]"): EvalComponentMean,
    ("EvalJob", "summary.usage"): EvalUsageSummary,
    ("EvalJob", "summary.timing"): EvalTimingSummary,
    ("EvalJob", "summary.timing.generation_ms"): EvalSpread,
    ("EvalJob", "summary.timing.env_ms"): EvalSpread,
    ("EvalJob", "summary.timing.scoring_ms"): EvalSpread,
    ("EvalJob", "summary.timing.total_ms"): EvalSpread,
    ("EvalJob", "summary.histogram[]"): EvalHistogramBin,
    ("EvalRollout", "components[]"): ScoreComponent,
    ("ResetResponse", "model_endpoint"): ModelEndpoint,
    ("EpisodeTurn", "call"): ModelCall,
    ("EpisodeTurn", "call.usage"): ModelCallUsage,
    ("Episode", "agent"): AgentRun,
}


def message_dict(message: Any) -> dict[str, Any]:
    """A message as the JSON object the server and chat templates expect (no null fields)."""
    if isinstance(message, BaseModel):
        return message.model_dump(exclude_none=True)
    return {k: v for k, v in dict(message).items() if v is not None}
