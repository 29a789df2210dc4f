// This file is generated from releases/openapi-15.18.yaml by `npm run generate`. Do not edit it by hand.

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
         *     The operation takes no parameters besides the agent number. A client
         *     may send no body at all, with no Content-Type (as upstream's Python
         *     client does) or with `application/json`, or the empty JSON object
         *     `{}`; any other JSON body is refused with 400.
         */
        post: operations["unpauseAgentByNumber"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * Format: int32
         * @description Numeric identifier of the agent.
         */
        AgentId: number;
        /** @description Agent number, digits only. */
        AgentNumber: string;
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
            /**
             * @description Interface used to determine whether the agent is in use, in the
             *     form `<technology>/<name>` (for example `PJSIP/alice`); null when
             *     not logged in.
             *
             *     Since release 15.15.
             */
            state_interface: string | null;
        } & (unknown & unknown);
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
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["AgentStatus"];
            };
        };
        /** @description The request is invalid: it has a query parameter (this operation declares none) or a body (a GET takes none), or a header or the request itself is malformed; `details`, when present, names each place. */
        BadRequest: {
            headers: {
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
         */
        BadPauseRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "invalid request";
                };
            };
        };
        /** @description No agent has this identifier or number. */
        NoSuchAgent: {
            headers: {
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
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /** @constant */
                    error?: "not logged in";
                };
            };
        };
        /**
         * @description More requests than the rate limit allows: unless the operator set
         *     another (`AGENTD_RATE_LIMIT`), 100 a second, after a burst of 200.
         */
        TooManyRequests: {
            headers: {
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
         *     To a pause or an unpause, a 503 says that the outcome was not known in
         *     time, not that nothing happened: a change the database was already
         *     making may still be committed. Both operations are idempotent: repeat
         *     the request.
         */
        ServiceUnavailable: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    /**
                     * @description The database did not answer.
                     * @constant
                     */
                    error?: "database unavailable";
                };
            };
        };
        /** @description An unexpected error; details are logged with the request id, never sent. */
        ServerError: {
            headers: {
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
         * @example 1
         */
        AgentId: components["schemas"]["AgentId"];
        /**
         * @description Agent number, digits only.
         * @example 1001
         */
        AgentNumber: components["schemas"]["AgentNumber"];
    };
    requestBodies: never;
    headers: {
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentStatus"][];
                };
            };
            400: components["responses"]["BadRequest"];
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
        requestBody?: never;
        responses: {
            /** @description The agent is paused. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadPauseRequest"];
            404: components["responses"]["NoSuchAgent"];
            409: components["responses"]["NotLoggedIn"];
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
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadAgentNumber"];
            404: components["responses"]["NoSuchAgent"];
            409: components["responses"]["NotLoggedIn"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["ServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
}
