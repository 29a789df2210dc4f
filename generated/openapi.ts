// This file is generated from openapi.yaml by `npm run generate`. Do not edit it by hand.

export interface paths {
    "/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List agents
         * @description Returns the status of every agent of the deployment, ordered by `id`.
         *
         *     <!-- x-since: "15.19" -->
         *     Required ACL: `agentd.agents.read`.
         */
        get: operations["listAgents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agents/by-id/{agent_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an agent by identifier
         * @description Returns the status of the agent with the given numeric identifier.
         *
         *     <!-- x-since: "15.19" -->
         *     Required ACL: `agentd.agents.by-id.{agent_id}.read`.
         */
        get: operations["getAgentById"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agents/by-number/{agent_number}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an agent by number
         * @description Returns the status of the agent with the given agent number.
         *
         *     <!-- x-since: "15.19" -->
         *     Required ACL: `agentd.agents.by-number.{agent_number}.read`.
         */
        get: operations["getAgentByNumber"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agents/by-number/{agent_number}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Pause an agent
         * @description Pauses the logged-in agent with the given agent number. Pausing an
         *     agent that is already paused is not an error. The change is committed
         *     before the response is sent.
         *
         *     <!-- x-since: "17.05" -->
         *     The reason goes in the optional JSON body: 1 to 80 characters,
         *     without NUL or lone surrogates. Any other body (an empty or too long
         *     reason, one that is not a string, an unknown field) is refused with
         *     400. A pause of an agent that is already paused replaces its reason,
         *     and clears it when none is given.
         *
         *     <!-- x-since: "15.19" -->
         *     Required ACL: `agentd.agents.by-number.{agent_number}.pause.create`.
         */
        post: operations["pauseAgentByNumber"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agents/by-number/{agent_number}/unpause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Unpause an agent
         * @description Ends the pause of the logged-in agent with the given agent number.
         *     Unpausing an agent that is not paused is not an error. The change is
         *     committed before the response is sent.
         *
         *     <!-- x-since: "17.05" -->
         *     The agent's `paused` becomes false and its `paused_reason` null.
         *
         *     The operation takes no parameters besides the agent number. A client
         *     may send no body at all, with no Content-Type (as upstream's Python
         *     client does) or with `application/json`, or the empty JSON object
         *     `{}`; any other JSON body is refused with 400.
         *
         *     <!-- x-since: "17.05" -->
         *     A body of another media type is refused with 415, and one over the
         *     size limit with 413.
         *
         *     <!-- x-since: "15.19" -->
         *     Required ACL: `agentd.agents.by-number.{agent_number}.unpause.create`.
         */
        post: operations["unpauseAgentByNumber"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    agentPaused: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An agent was paused
         * @description Sent after a pause changed an agent's stored state: the agent was not
         *     paused, or was paused with another reason. A pause that changes
         *     nothing sends nothing, and neither does `agentd import`.
         *
         *     **On the bus** (AMQP 0-9-1, RabbitMQ): published to the durable topic
         *     exchange `AGENTD_BUS_EXCHANGE` (default `xivo`) with routing key
         *     `status.agent.pause`, content type `application/json`, persistent,
         *     with publisher confirms. The AMQP `messageId` is the event's id and
         *     `timestamp` its time in seconds.
         *
         *     **As a webhook**: a `POST` of the same body to each of
         *     `AGENTD_WEBHOOK_URLS`, signed per the Standard Webhooks specification
         *     with `AGENTD_WEBHOOK_SECRET`. Any `2xx` answer means delivered; any
         *     other answer, or none within the time-out (`AGENTD_WEBHOOK_TIMEOUT`,
         *     5 seconds by default), is retried with an exponential backoff (the
         *     delay between tries is capped, the number of tries is not) until it
         *     is delivered or an operator drops it (`agentd events drop`). The same
         *     agent's later events wait behind it, so each receiver gets an agent's
         *     events in order. An answer that says the receiver takes no event now
         *     holds back every agent's events to it until a retry is taken: `401`,
         *     `403`, `404`, `405`, `408`, `410`, `429`, any `5xx`, a redirect, or no
         *     answer in time. Any other `4xx` (`400`, `409`, `422`…) refuses that
         *     event only.
         *
         *     The receiver authenticates the service by the signature: a delivery
         *     carries no `X-Auth-Token`. To check one, take the raw body and the
         *     `webhook-id` and `webhook-timestamp` headers; refuse a timestamp more
         *     than five minutes away from the receiver's clock (a replay); compute
         *     the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed
         *     with the secret's bytes (the base64 after `whsec_`), in base64; and
         *     accept the delivery only when that equals, compared in constant time,
         *     one of the `v1,<signature>` entries of `webhook-signature` (while the
         *     service's secret is being replaced, a delivery carries one signature
         *     per secret: check with the one secret the receiver holds). Answer a
         *     delivery that fails the check with `401`, which holds back every event
         *     to the receiver, as a wrong secret should. Standard Webhooks libraries
         *     do all of it; the project's `samples/` holds receivers in TypeScript
         *     and Python (shown on the current contract's page).
         *
         *     Delivery is at least once, in order per agent (one order per bus and
         *     per webhook URL). A consumer recognises a repeated delivery by its id
         *     (`messageId`, `webhook-id`).
         */
        post: operations["agentPaused"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    agentUnpaused: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An agent was unpaused
         * @description Sent after an unpause changed an agent's stored state: the agent was
         *     paused. An unpause of an agent that is not paused sends nothing, and
         *     neither does `agentd import`.
         *
         *     Delivered and signed like `agentPaused` (see there, also for how a
         *     receiver checks the signature: a delivery carries no token), with
         *     routing key `status.agent.unpause` on the bus.
         */
        post: operations["agentUnpaused"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * Format: int32
         * @description Numeric identifier of the agent.
         */
        AgentId: number;
        /** @description Agent number, digits only. */
        AgentNumber: string;
        /**
         * @description Why the agent is paused, as shown to supervisors. Any text but the NUL
         *     character, as well-formed Unicode: never a lone UTF-16 surrogate (an
         *     escape such as `\ud800` without its pair). Stored and returned as
         *     sent: clients that print it to a terminal should escape control and
         *     bidirectional characters.
         */
        PauseReason: string;
        /** @description The status of one agent. */
        AgentStatus: {
            /** @description Numeric identifier of the agent. */
            id: components["schemas"]["AgentId"];
            /**
             * Format: uuid
             * @description UUID of the deployment that owns the agent. The same for every
             *     agent and every server instance of one deployment.
             */
            origin_uuid: string;
            /** @description Agent number, digits only. */
            number: components["schemas"]["AgentNumber"];
            /** @description Extension the agent is logged in on; null when not logged in. */
            extension: string | null;
            /** @description Dialplan context of the extension; null when not logged in. */
            context: string | null;
            /** @description Whether the agent is logged in. */
            logged: boolean;
            /** @description Whether the agent is paused; always false when not logged in. */
            paused: boolean;
            /** @description Reason given for the pause; null when not paused or when no reason was given. */
            paused_reason: components["schemas"]["PauseReason"] | null;
            /**
             * @description Interface used to determine whether the agent is in use, in the
             *     form `<technology>/<name>` (for example `PJSIP/alice`); null when
             *     not logged in.
             */
            state_interface: string | null;
        } & (unknown & unknown & unknown & unknown);
        /** @description The `agent_paused` event, in upstream 17.05's bus message format, with the same fields and values but one event per change with `queue` null (`EventQueue`). */
        AgentPausedEvent: {
            /**
             * @description The event's name, as upstream names it.
             * @constant
             */
            name: "agent_paused";
            /**
             * Format: uuid
             * @description UUID of the deployment, as in every agent status.
             */
            origin_uuid: string;
            data: components["schemas"]["AgentPausedEventData"];
            required_acl: components["schemas"]["EventRequiredAcl"];
        };
        /** @description The agent and its pause state after the change. */
        AgentPausedEventData: {
            agent_id: components["schemas"]["AgentId"];
            agent_number: components["schemas"]["AgentNumber"];
            queue: components["schemas"]["EventQueue"];
            /**
             * @description Always true.
             * @constant
             */
            paused: true;
            paused_reason: components["schemas"]["EventPauseReason"];
        };
        /** @description The `agent_unpaused` event, in upstream 17.05's bus message format, with the same fields and values but one event per change with `queue` null (`EventQueue`). */
        AgentUnpausedEvent: {
            /**
             * @description The event's name, as upstream names it.
             * @constant
             */
            name: "agent_unpaused";
            /**
             * Format: uuid
             * @description UUID of the deployment, as in every agent status.
             */
            origin_uuid: string;
            data: components["schemas"]["AgentUnpausedEventData"];
            required_acl: components["schemas"]["EventRequiredAcl"];
        };
        /** @description The agent and its pause state after the change. */
        AgentUnpausedEventData: {
            agent_id: components["schemas"]["AgentId"];
            agent_number: components["schemas"]["AgentNumber"];
            queue: components["schemas"]["EventQueue"];
            /**
             * @description Always false.
             * @constant
             */
            paused: false;
            /**
             * @description Always the empty string (no reason), as upstream sends it.
             * @constant
             */
            paused_reason: "";
        };
        /**
         * @description Upstream sent one event per queue the agent is in, naming the queue.
         *     This service has no queues: it sends one event per change, and
         *     `queue` is always null. A consumer written against upstream that reads
         *     `queue` as a string must accept null here.
         */
        EventQueue: null;
        /**
         * @description The agent's pause reason after the change, as upstream's bus sends
         *     it: the empty string when there is none. The REST API says null for "no reason"
         *     (`AgentStatus.paused_reason`), but the events keep upstream's wire
         *     format, so that consumers written against upstream 17.05 (which
         *     expect a string here) read this field unchanged (`queue` differs:
         *     see `EventQueue`).
         */
        EventPauseReason: components["schemas"]["PauseReason"] | "";
        /**
         * @description The ACL a bus consumer needs to receive the event (upstream's field; carried as it is).
         * @constant
         */
        EventRequiredAcl: "events.statuses.agents";
        /** @description Optional details of a pause. */
        PauseRequest: {
            reason?: components["schemas"]["PauseReason"];
        };
        /** @description The body of an unpause, when one is sent at all (the empty object). */
        UnpauseRequest: Record<string, never>;
        /** @description The body of every error response. */
        Error: {
            /** @description Stable identifier of the error; clients branch on it. Each error response names the identifiers it carries. */
            error: string;
            /** @description For invalid requests, what was wrong and where. */
            details?: components["schemas"]["ErrorDetail"][];
        };
        /** @description One problem found in a request. */
        ErrorDetail: {
            /**
             * @description Which part of the request holds the problem.
             * @enum {string}
             */
            location: "path" | "query" | "header" | "body";
            /** @description The offending parameter, header or JSON pointer into the body. */
            path: string;
            /** @description What is wrong, for a human reader. */
            message: string;
        };
    };
    responses: {
        /** @description The status of the agent. */
        AgentStatus: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["AgentStatus"];
            };
        };
        /** @description The request is invalid: it has a query parameter (this operation declares none) or a body (a GET takes none), or a header or the request itself is malformed; `details`, when present, names each place. */
        BadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "invalid request";
                };
            };
        };
        /** @description The request is invalid: `agent_id` is not a whole number from 1 to 2147483647, or the request has a query parameter (this operation declares none) or a body (a GET takes none), or a header or the request itself is malformed; `details`, when present, names each place. */
        BadAgentId: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "invalid request";
                };
            };
        };
        /** @description The request is invalid: `agent_number` is not digits only, or the request has a query parameter (the operation declares none) or a body the operation does not take, or a header or the request itself is malformed; `details`, when present, names each place. */
        BadAgentNumber: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "invalid request";
                };
            };
        };
        /**
         * @description The request is invalid: `agent_number` is not digits only; the request
         *     has a body the operation does not take or a query parameter (the
         *     operation declares none); or a header or the request itself is
         *     malformed. `details`, when present, names each place.
         *
         *     <!-- x-since: "17.05" -->
         *     The body it takes is a `PauseRequest`: one that is not an object, a
         *     `reason` that is empty, over 80 characters or not a string, or an
         *     unknown field is refused.
         */
        BadPauseRequest: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "invalid request";
                };
            };
        };
        /** @description The token is missing, unknown or expired. */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                /**
                 * @description The challenge of a `401`, naming the header the token goes in (RFC 9110 requires one).
                 * @example X-Auth-Token realm="agentd"
                 */
                "WWW-Authenticate": "X-Auth-Token realm=\"agentd\"";
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "invalid token or unauthorized";
                };
            };
        };
        /** @description The token is valid but lacks the operation's ACL. */
        Forbidden: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "insufficient permissions";
                };
            };
        };
        /** @description No agent has this identifier or number. */
        NoSuchAgent: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "no such agent";
                };
            };
        };
        /** @description The agent is not logged in, so it cannot be paused or unpaused. */
        NotLoggedIn: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "not logged in";
                };
            };
        };
        /** @description The request body is larger than the server accepts (16 KiB unless its operator set another limit, `AGENTD_BODY_LIMIT`). */
        PayloadTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "payload too large";
                };
            };
        };
        /** @description The request body is not JSON. */
        UnsupportedMediaType: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "unsupported media type";
                };
            };
        };
        /**
         * @description More requests than the rate limit allows: unless the operator set
         *     another (`AGENTD_RATE_LIMIT`), 100 a second, after a burst of 200.
         *
         *     <!-- x-since: "15.19" -->
         *     A valid token has its own budget; a token not yet known to be valid
         *     has the budget of its client address and token, and a request without
         *     a token that of its client address. With an external authentication
         *     service, also when the instance's cap on token checks sent to it is
         *     reached.
         */
        TooManyRequests: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "too many requests";
                };
            };
        };
        /**
         * @description The database cannot be reached; retry later.
         *
         *     <!-- x-since: "15.19" -->
         *     The same status, with `authentication server unreachable`, when the
         *     authentication service cannot be reached.
         *
         *     To a pause or an unpause, a 503 says that the outcome was not known in
         *     time, not that nothing happened: a change the database was already
         *     making may still be committed. Both operations are idempotent: repeat
         *     the request.
         *
         *     <!-- x-since: "17.05" -->
         *     A change committed so sends its event too.
         */
        ServiceUnavailable: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    error?: string & ("database unavailable" | "authentication server unreachable");
                };
            };
        };
        /** @description An unexpected error; details are logged with the request id, never sent. */
        ServerError: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "server error";
                };
            };
        };
    };
    parameters: {
        /**
         * @description Numeric identifier of the agent.
         *
         *     <!-- x-since: "17.05" -->
         *     Written in decimal digits, leading zeros allowed (`01` is agent 1);
         *     any other form of the number (`+1`, `1e3`, `1.0`) is refused with 400.
         * @example 1
         */
        AgentId: components["schemas"]["AgentId"];
        /**
         * @description Agent number, digits only.
         * @example 1001
         */
        AgentNumber: components["schemas"]["AgentNumber"];
        /**
         * @description The event's id (Standard Webhooks), the same on every delivery of one
         *     event and equal to the AMQP `messageId` on the bus: a receiver drops
         *     an id it has already handled.
         * @example 0b9f3c1e-6d1a-4c57-9a53-2f0e8e1d7c44
         */
        WebhookId: string;
        /**
         * @description When this delivery was signed, in seconds since the Unix epoch
         *     (Standard Webhooks); part of what is signed. Each retry is signed
         *     anew, since receivers reject old timestamps. The event carries no
         *     time of its own (its body is upstream's bus message): it happened at
         *     or before the first delivery's timestamp, and after a retry possibly
         *     long before this one's.
         * @example 1700000000
         */
        WebhookTimestamp: string;
        /**
         * @description `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`
         *     keyed with `AGENTD_WEBHOOK_SECRET` (Standard Webhooks; verify with any
         *     of its libraries, e.g. the `standardwebhooks` npm package). While one
         *     secret replaces another, one such entry per secret, separated by a
         *     space: accept the delivery when any of them matches.
         * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
         */
        WebhookSignature: string;
    };
    requestBodies: never;
    headers: {
        /**
         * @description The id the service's log lines give this request: the client's own
         *     `X-Request-Id` when it sent one of 1 to 64 letters, digits, `.`, `_`
         *     or `-`, a new UUID otherwise. Quote it when reporting a `500`.
         * @example 0b7c5e2e-3f4a-4d1b-9c8e-2a6f1d3e5b70
         */
        RequestId: string;
        /**
         * @description Seconds to wait before the next request will be accepted.
         * @example 1
         */
        RetryAfter: number;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listAgents: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The status of every agent. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentStatus"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["ServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAgentById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Numeric identifier of the agent.
                 *
                 *     <!-- x-since: "17.05" -->
                 *     Written in decimal digits, leading zeros allowed (`01` is agent 1);
                 *     any other form of the number (`+1`, `1e3`, `1.0`) is refused with 400.
                 * @example 1
                 */
                agent_id: components["parameters"]["AgentId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["AgentStatus"];
            400: components["responses"]["BadAgentId"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NoSuchAgent"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["ServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAgentByNumber: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Agent number, digits only.
                 * @example 1001
                 */
                agent_number: components["parameters"]["AgentNumber"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["AgentStatus"];
            400: components["responses"]["BadAgentNumber"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NoSuchAgent"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["ServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    pauseAgentByNumber: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Agent number, digits only.
                 * @example 1001
                 */
                agent_number: components["parameters"]["AgentNumber"];
            };
            cookie?: never;
        };
        /** @description The optional reason for the pause. */
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PauseRequest"];
            };
        };
        responses: {
            /** @description The agent is paused. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadPauseRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NoSuchAgent"];
            409: components["responses"]["NotLoggedIn"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["ServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    unpauseAgentByNumber: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Agent number, digits only.
                 * @example 1001
                 */
                agent_number: components["parameters"]["AgentNumber"];
            };
            cookie?: never;
        };
        /** @description Nothing; when a body is sent it must be the empty JSON object. */
        requestBody?: {
            content: {
                "application/json": components["schemas"]["UnpauseRequest"];
            };
        };
        responses: {
            /** @description The agent is not paused (any longer). */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadAgentNumber"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NoSuchAgent"];
            409: components["responses"]["NotLoggedIn"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["ServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    agentPaused: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description The event's id (Standard Webhooks), the same on every delivery of one
                 *     event and equal to the AMQP `messageId` on the bus: a receiver drops
                 *     an id it has already handled.
                 * @example 0b9f3c1e-6d1a-4c57-9a53-2f0e8e1d7c44
                 */
                "webhook-id": components["parameters"]["WebhookId"];
                /**
                 * @description When this delivery was signed, in seconds since the Unix epoch
                 *     (Standard Webhooks); part of what is signed. Each retry is signed
                 *     anew, since receivers reject old timestamps. The event carries no
                 *     time of its own (its body is upstream's bus message): it happened at
                 *     or before the first delivery's timestamp, and after a retry possibly
                 *     long before this one's.
                 * @example 1700000000
                 */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /**
                 * @description `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`
                 *     keyed with `AGENTD_WEBHOOK_SECRET` (Standard Webhooks; verify with any
                 *     of its libraries, e.g. the `standardwebhooks` npm package). While one
                 *     secret replaces another, one such entry per secret, separated by a
                 *     space: accept the delivery when any of them matches.
                 * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
                 */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, in upstream's bus message format (`queue` aside). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["AgentPausedEvent"];
            };
        };
        responses: {
            /** @description Delivered; the event is not sent to this receiver again. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not delivered; the event is sent again after a backoff. A `401`, `403`, `404`, `405`, `408`, `410` or `429` holds back every agent's events to this receiver meanwhile; any other `4xx`, only this agent's later ones. */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not delivered (as is no answer within the time-out); the event is sent again after a backoff, and every agent's events to this receiver wait meanwhile. */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    agentUnpaused: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description The event's id (Standard Webhooks), the same on every delivery of one
                 *     event and equal to the AMQP `messageId` on the bus: a receiver drops
                 *     an id it has already handled.
                 * @example 0b9f3c1e-6d1a-4c57-9a53-2f0e8e1d7c44
                 */
                "webhook-id": components["parameters"]["WebhookId"];
                /**
                 * @description When this delivery was signed, in seconds since the Unix epoch
                 *     (Standard Webhooks); part of what is signed. Each retry is signed
                 *     anew, since receivers reject old timestamps. The event carries no
                 *     time of its own (its body is upstream's bus message): it happened at
                 *     or before the first delivery's timestamp, and after a retry possibly
                 *     long before this one's.
                 * @example 1700000000
                 */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /**
                 * @description `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`
                 *     keyed with `AGENTD_WEBHOOK_SECRET` (Standard Webhooks; verify with any
                 *     of its libraries, e.g. the `standardwebhooks` npm package). While one
                 *     secret replaces another, one such entry per secret, separated by a
                 *     space: accept the delivery when any of them matches.
                 * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
                 */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, in upstream's bus message format (`queue` aside). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["AgentUnpausedEvent"];
            };
        };
        responses: {
            /** @description Delivered; the event is not sent to this receiver again. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not delivered; the event is sent again after a backoff. A `401`, `403`, `404`, `405`, `408`, `410` or `429` holds back every agent's events to this receiver meanwhile; any other `4xx`, only this agent's later ones. */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not delivered (as is no answer within the time-out); the event is sent again after a backoff, and every agent's events to this receiver wait meanwhile. */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
