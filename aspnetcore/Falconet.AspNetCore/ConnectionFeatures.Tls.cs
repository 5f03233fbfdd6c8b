using System;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Transport.Tls;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;

namespace Falconet.AspNetCore;

/// <summary>
/// The TLS features of an HTTPS connection, from what its handshake negotiated (<see cref="TlsConnectionInfo"/>): the client
/// certificate, the protocol, cipher suite and SNI host name, the ALPN protocol, and the HTTPS compression mode. Absent from
/// the feature collection on plain connections.
/// </summary>
internal sealed partial class ConnectionFeatures<TContext> : ITlsConnectionFeature, ITlsHandshakeFeature, ITlsApplicationProtocolFeature,
    IHttpsCompressionFeature
{
    private TlsConnectionInfo? _tls;
    private X509Certificate2? _clientCertificate;
    private HttpsCompressionMode _compressionMode;

    /// <summary>True on a TLS connection.</summary>
    public bool IsHttps => _tls is not null;

    // ITlsConnectionFeature

    public X509Certificate2? ClientCertificate
    {
        get => _clientCertificate ?? _tls?.ClientCertificate;
        set => _clientCertificate = value;
    }

    /// <summary>The certificate the client presented in the handshake; Falconet never renegotiates to ask for one later.</summary>
    public Task<X509Certificate2?> GetClientCertificateAsync(CancellationToken cancellationToken) => Task.FromResult(ClientCertificate);

    // ITlsHandshakeFeature

    SslProtocols ITlsHandshakeFeature.Protocol => _tls?.Protocol ?? SslProtocols.None;

    public TlsCipherSuite? NegotiatedCipherSuite => _tls?.CipherSuite;

    public string HostName => _tls?.HostName ?? string.Empty;

    // The separate algorithm members are obsolete (they cannot describe TLS 1.3 suites): read NegotiatedCipherSuite instead.
    [Obsolete("Use NegotiatedCipherSuite.")]
    CipherAlgorithmType ITlsHandshakeFeature.CipherAlgorithm => CipherAlgorithmType.None;

    [Obsolete("Use NegotiatedCipherSuite.")]
    int ITlsHandshakeFeature.CipherStrength => 0;

    [Obsolete("Use NegotiatedCipherSuite.")]
    HashAlgorithmType ITlsHandshakeFeature.HashAlgorithm => HashAlgorithmType.None;

    [Obsolete("Use NegotiatedCipherSuite.")]
    int ITlsHandshakeFeature.HashStrength => 0;

    [Obsolete("Use NegotiatedCipherSuite.")]
    ExchangeAlgorithmType ITlsHandshakeFeature.KeyExchangeAlgorithm => ExchangeAlgorithmType.None;

    [Obsolete("Use NegotiatedCipherSuite.")]
    int ITlsHandshakeFeature.KeyExchangeStrength => 0;

    // ITlsApplicationProtocolFeature

    public ReadOnlyMemory<byte> ApplicationProtocol => _tls?.ApplicationProtocol.Protocol ?? default;

    // IHttpsCompressionFeature

    public HttpsCompressionMode Mode
    {
        get => _compressionMode;
        set => _compressionMode = value;
    }

    /// <summary>Reads what the handshake negotiated (once per connection).</summary>
    private void InitializeTls()
    {
        _tls = _context.GetTlsConnectionInfo();
    }

    /// <summary>The per-request TLS state back to the handshake's.</summary>
    private void ResetTls()
    {
        _clientCertificate = null;
        _compressionMode = HttpsCompressionMode.Default;
    }
}
