using Falconet.Http.Tests.Http1;
using Falconet.Http.Tests.Http2;
using Falconet.Http.Tests.Server;
using Falconet.Server;
using Xunit.Abstractions;

namespace Falconet.Http.Tests.Tls;

// The end-to-end suites again on the OpenSSL engine (TlsServerOptions.Engine = OpenSsl): the same requests and
// expectations over HTTPS, HTTP/1.1 and HTTP/2 (h2 by ALPN); on libuv, the transport of the TLS measurements, and for
// the HTTPS, HTTP/2 exchange and allocation suites on sockets too, whose completions run on the thread pool.

/// <summary><see cref="HttpsTests"/> on the OpenSSL engine, on the sockets transport.</summary>
public sealed class HttpsTestsOnOpenSsl : HttpsTests
{
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;
}

/// <summary><see cref="HttpsTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class HttpsTestsOnOpenSslOnLibuv : HttpsTests
{
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="HttpsTests"/> on the OpenSSL engine, on the io_uring transport.</summary>
public sealed class HttpsTestsOnOpenSslOnIoUring : HttpsTests
{
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary><see cref="KeepAliveAndPipeliningTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class KeepAliveAndPipeliningTestsOnOpenSslOnLibuv : KeepAliveAndPipeliningTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="RequestBodyTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class RequestBodyTestsOnOpenSslOnLibuv : RequestBodyTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ResponseBodyTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class ResponseBodyTestsOnOpenSslOnLibuv : ResponseBodyTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ResponseHeadTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class ResponseHeadTestsOnOpenSslOnLibuv : ResponseHeadTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ProtocolSemanticsTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class ProtocolSemanticsTestsOnOpenSslOnLibuv : ProtocolSemanticsTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ErrorHandlingTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class ErrorHandlingTestsOnOpenSslOnLibuv : ErrorHandlingTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ExpectContinueTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class ExpectContinueTestsOnOpenSslOnLibuv : ExpectContinueTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="LingeringCloseTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class LingeringCloseTestsOnOpenSslOnLibuv : LingeringCloseTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="TimeoutTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class TimeoutTestsOnOpenSslOnLibuv : TimeoutTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="ShutdownTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class ShutdownTestsOnOpenSslOnLibuv : ShutdownTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="TlsDescriptorTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class TlsDescriptorTestsOnOpenSslOnLibuv : TlsDescriptorTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="Http2ExchangeTests"/> on the OpenSSL engine, on the sockets transport.</summary>
public sealed class Http2ExchangeTestsOnOpenSsl : Http2ExchangeTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;
}

/// <summary><see cref="Http2ExchangeTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class Http2ExchangeTestsOnOpenSslOnLibuv : Http2ExchangeTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="Http2DefenceTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class Http2DefenceTestsOnOpenSslOnLibuv : Http2DefenceTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="Http2ProtocolErrorTests"/> on the OpenSSL engine, on the libuv transport.</summary>
public sealed class Http2ProtocolErrorTestsOnOpenSslOnLibuv : Http2ProtocolErrorTests
{
    protected override bool Https => true;
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary><see cref="AllocationTests"/> over TLS on the OpenSSL engine, on the sockets transport: records written by the BIO into pool blocks, 0 B in steady state.</summary>
public sealed class AllocationTestsOnOpenSsl(ITestOutputHelper output) : AllocationTests(output)
{
    protected override bool Https => true;

    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;
}

/// <summary><see cref="AllocationTests"/> over TLS on the OpenSSL engine, on the libuv transport: records written by the BIO into pool blocks, 0 B in steady state.</summary>
public sealed class AllocationTestsOnOpenSslOnLibuv(ITestOutputHelper output) : AllocationTests(output)
{
    protected override bool Https => true;

    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;

    protected override TransportKind Transport => TransportKind.Libuv;
}
