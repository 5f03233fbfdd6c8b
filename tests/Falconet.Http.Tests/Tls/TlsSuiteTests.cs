using Falconet.Http.Tests.Http1;
using Falconet.Http.Tests.Server;
using Falconet.Server;

namespace Falconet.Http.Tests.Tls;

// The end-to-end suites again over TLS: the same requests and expectations, the server listening on HTTPS only and
// every client completing a TLS handshake first, on both transports. The HTTP layer is the same; only the transport
// connection is the TLS decorator.

/// <summary><see cref="KeepAliveAndPipeliningTests"/> over TLS on the sockets transport.</summary>
public sealed class KeepAliveAndPipeliningTestsOverTls : KeepAliveAndPipeliningTests
{
    protected override bool Https => true;
}

/// <summary><see cref="KeepAliveAndPipeliningTests"/> over TLS on the libuv transport.</summary>
public sealed class KeepAliveAndPipeliningTestsOverTlsOnLibuv : KeepAliveAndPipeliningTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="KeepAliveAndPipeliningTests"/> over TLS on the io_uring transport.</summary>
public sealed class KeepAliveAndPipeliningTestsOverTlsOnIoUring : KeepAliveAndPipeliningTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="RequestBodyTests"/> over TLS on the sockets transport.</summary>
public sealed class RequestBodyTestsOverTls : RequestBodyTests
{
    protected override bool Https => true;
}

/// <summary><see cref="RequestBodyTests"/> over TLS on the libuv transport.</summary>
public sealed class RequestBodyTestsOverTlsOnLibuv : RequestBodyTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="RequestBodyTests"/> over TLS on the io_uring transport.</summary>
public sealed class RequestBodyTestsOverTlsOnIoUring : RequestBodyTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="ResponseBodyTests"/> over TLS on the sockets transport.</summary>
public sealed class ResponseBodyTestsOverTls : ResponseBodyTests
{
    protected override bool Https => true;
}

/// <summary><see cref="ResponseBodyTests"/> over TLS on the libuv transport.</summary>
public sealed class ResponseBodyTestsOverTlsOnLibuv : ResponseBodyTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ResponseBodyTests"/> over TLS on the io_uring transport.</summary>
public sealed class ResponseBodyTestsOverTlsOnIoUring : ResponseBodyTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="ResponseHeadTests"/> over TLS on the sockets transport.</summary>
public sealed class ResponseHeadTestsOverTls : ResponseHeadTests
{
    protected override bool Https => true;
}

/// <summary><see cref="ResponseHeadTests"/> over TLS on the libuv transport.</summary>
public sealed class ResponseHeadTestsOverTlsOnLibuv : ResponseHeadTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ResponseHeadTests"/> over TLS on the io_uring transport.</summary>
public sealed class ResponseHeadTestsOverTlsOnIoUring : ResponseHeadTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="ProtocolSemanticsTests"/> over TLS on the sockets transport.</summary>
public sealed class ProtocolSemanticsTestsOverTls : ProtocolSemanticsTests
{
    protected override bool Https => true;
}

/// <summary><see cref="ProtocolSemanticsTests"/> over TLS on the libuv transport.</summary>
public sealed class ProtocolSemanticsTestsOverTlsOnLibuv : ProtocolSemanticsTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ProtocolSemanticsTests"/> over TLS on the io_uring transport.</summary>
public sealed class ProtocolSemanticsTestsOverTlsOnIoUring : ProtocolSemanticsTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="ErrorHandlingTests"/> over TLS on the sockets transport.</summary>
public sealed class ErrorHandlingTestsOverTls : ErrorHandlingTests
{
    protected override bool Https => true;
}

/// <summary><see cref="ErrorHandlingTests"/> over TLS on the libuv transport.</summary>
public sealed class ErrorHandlingTestsOverTlsOnLibuv : ErrorHandlingTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ErrorHandlingTests"/> over TLS on the io_uring transport.</summary>
public sealed class ErrorHandlingTestsOverTlsOnIoUring : ErrorHandlingTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="ExpectContinueTests"/> over TLS on the sockets transport.</summary>
public sealed class ExpectContinueTestsOverTls : ExpectContinueTests
{
    protected override bool Https => true;
}

/// <summary><see cref="ExpectContinueTests"/> over TLS on the libuv transport.</summary>
public sealed class ExpectContinueTestsOverTlsOnLibuv : ExpectContinueTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ExpectContinueTests"/> over TLS on the io_uring transport.</summary>
public sealed class ExpectContinueTestsOverTlsOnIoUring : ExpectContinueTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="LingeringCloseTests"/> over TLS on the sockets transport.</summary>
public sealed class LingeringCloseTestsOverTls : LingeringCloseTests
{
    protected override bool Https => true;
}

/// <summary><see cref="LingeringCloseTests"/> over TLS on the libuv transport.</summary>
public sealed class LingeringCloseTestsOverTlsOnLibuv : LingeringCloseTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="LingeringCloseTests"/> over TLS on the io_uring transport.</summary>
public sealed class LingeringCloseTestsOverTlsOnIoUring : LingeringCloseTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="TimeoutTests"/> over TLS on the sockets transport.</summary>
public sealed class TimeoutTestsOverTls : TimeoutTests
{
    protected override bool Https => true;
}

/// <summary><see cref="TimeoutTests"/> over TLS on the libuv transport.</summary>
public sealed class TimeoutTestsOverTlsOnLibuv : TimeoutTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="TimeoutTests"/> over TLS on the io_uring transport.</summary>
public sealed class TimeoutTestsOverTlsOnIoUring : TimeoutTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="ShutdownTests"/> over TLS on the sockets transport.</summary>
public sealed class ShutdownTestsOverTls : ShutdownTests
{
    protected override bool Https => true;
}

/// <summary><see cref="ShutdownTests"/> over TLS on the libuv transport.</summary>
public sealed class ShutdownTestsOverTlsOnLibuv : ShutdownTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ShutdownTests"/> over TLS on the io_uring transport.</summary>
public sealed class ShutdownTestsOverTlsOnIoUring : ShutdownTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="LimitTests"/> over TLS on the sockets transport.</summary>
public sealed class LimitTestsOverTls : LimitTests
{
    protected override bool Https => true;
}

/// <summary><see cref="LimitTests"/> over TLS on the libuv transport.</summary>
public sealed class LimitTestsOverTlsOnLibuv : LimitTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="LimitTests"/> over TLS on the io_uring transport.</summary>
public sealed class LimitTestsOverTlsOnIoUring : LimitTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="HostHeaderTests"/> over TLS on the sockets transport.</summary>
public sealed class HostHeaderTestsOverTls : HostHeaderTests
{
    protected override bool Https => true;
}

/// <summary><see cref="HostHeaderTests"/> over TLS on the libuv transport.</summary>
public sealed class HostHeaderTestsOverTlsOnLibuv : HostHeaderTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="HostHeaderTests"/> over TLS on the io_uring transport.</summary>
public sealed class HostHeaderTestsOverTlsOnIoUring : HostHeaderTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="DataRateTests"/> over TLS on the sockets transport: a reader that stops is cut off by the response data rate.</summary>
public sealed class DataRateTestsOverTls : DataRateTests
{
    protected override bool Https => true;
}

/// <summary><see cref="DataRateTests"/> over TLS on the libuv transport.</summary>
public sealed class DataRateTestsOverTlsOnLibuv : DataRateTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="DataRateTests"/> over TLS on the io_uring transport.</summary>
public sealed class DataRateTestsOverTlsOnIoUring : DataRateTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="BodyBehindRememberedHeadTests"/> over TLS on the sockets transport.</summary>
public sealed class BodyBehindRememberedHeadTestsOverTls : BodyBehindRememberedHeadTests
{
    protected override bool Https => true;
}

/// <summary><see cref="RepeatedRequestHeadTests"/> over TLS on the sockets transport.</summary>
public sealed class RepeatedRequestHeadTestsOverTls : RepeatedRequestHeadTests
{
    protected override bool Https => true;
}

/// <summary><see cref="PerRequestStateTests"/> over TLS on the sockets transport.</summary>
public sealed class PerRequestStateTestsOverTls : PerRequestStateTests
{
    protected override bool Https => true;
}
