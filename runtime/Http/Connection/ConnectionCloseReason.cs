namespace Falconet.Http;

/// <summary>Why the server closed a connection on its own initiative; logged and counted with a stable snake_case name.</summary>
internal enum ConnectionCloseReason : byte
{
    /// <summary>The server did not initiate the close: the peer closed or reset the connection, or an I/O error ended it.</summary>
    None,

    /// <summary>No request arrived within the keep-alive timeout.</summary>
    KeepAliveTimeout,

    /// <summary>The request head did not arrive within the request-headers timeout (answered 408).</summary>
    RequestHeadersTimeout,

    /// <summary>The request body arrived slower than the minimum request-body data rate.</summary>
    MinRequestBodyDataRate,

    /// <summary>The client read the response slower than the minimum response data rate.</summary>
    MinResponseDataRate,

    /// <summary>A request the server rejected with an error status (malformed, or over a limit).</summary>
    BadRequest,

    /// <summary>The request (Connection: close, or HTTP/1.0 without keep-alive) or the application's response asked for the close.</summary>
    ConnectionClose,

    /// <summary>More of the request body was left unread than the server reads and discards to keep a connection.</summary>
    UnreadRequestBody,

    /// <summary>The application failed: a 500 that could not keep the connection, or a failure after the response started.</summary>
    ApplicationError,

    /// <summary>The application aborted the connection (<see cref="HttpContext.Abort"/>).</summary>
    ApplicationAbort,

    /// <summary>The server is stopping.</summary>
    ServerStopping,

    /// <summary>The server stopped and aborted what was still running after its shutdown timeout.</summary>
    ShutdownTimeout,

    /// <summary>The connection had switched protocols (101) and its handler returned.</summary>
    UpgradeEnded,
}

/// <summary>The stable names of <see cref="ConnectionCloseReason"/> values, as logged and as the metric's reason tag.</summary>
internal static class ConnectionCloseReasons
{
    public static string Name(ConnectionCloseReason reason) => reason switch
    {
        ConnectionCloseReason.KeepAliveTimeout => "keep_alive_timeout",
        ConnectionCloseReason.RequestHeadersTimeout => "request_headers_timeout",
        ConnectionCloseReason.MinRequestBodyDataRate => "min_request_body_data_rate",
        ConnectionCloseReason.MinResponseDataRate => "min_response_data_rate",
        ConnectionCloseReason.BadRequest => "bad_request",
        ConnectionCloseReason.ConnectionClose => "connection_close",
        ConnectionCloseReason.UnreadRequestBody => "unread_request_body",
        ConnectionCloseReason.ApplicationError => "application_error",
        ConnectionCloseReason.ApplicationAbort => "application_abort",
        ConnectionCloseReason.ServerStopping => "server_stopping",
        ConnectionCloseReason.ShutdownTimeout => "shutdown_timeout",
        ConnectionCloseReason.UpgradeEnded => "upgrade_ended",
        _ => "none",
    };
}
