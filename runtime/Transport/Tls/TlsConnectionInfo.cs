using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace Falconet.Transport.Tls;

/// <summary>What the TLS handshake of an HTTPS connection negotiated: protocol, cipher suite, SNI host name, ALPN protocol and client certificate.</summary>
public sealed class TlsConnectionInfo
{
    internal TlsConnectionInfo(SslStream ssl)
    {
        Protocol = ssl.SslProtocol;
        CipherSuite = ssl.NegotiatedCipherSuite;
        HostName = string.IsNullOrEmpty(ssl.TargetHostName) ? null : ssl.TargetHostName;
        ApplicationProtocol = ssl.NegotiatedApplicationProtocol;
        ClientCertificate = TlsConnection.AsCertificate2(ssl.RemoteCertificate);
    }

    internal TlsConnectionInfo(SslProtocols protocol, TlsCipherSuite cipherSuite, string? hostName, SslApplicationProtocol applicationProtocol,
        X509Certificate2? clientCertificate)
    {
        Protocol = protocol;
        CipherSuite = cipherSuite;
        HostName = hostName;
        ApplicationProtocol = applicationProtocol;
        ClientCertificate = clientCertificate;
    }

    /// <summary>The protocol version (TLS 1.2 or 1.3 by default).</summary>
    public SslProtocols Protocol { get; }

    /// <summary>The cipher suite.</summary>
    public TlsCipherSuite CipherSuite { get; }

    /// <summary>The host name the client asked for with SNI, or null when it sent none.</summary>
    public string? HostName { get; }

    /// <summary>The protocol chosen with ALPN from the endpoint's <c>TlsServerOptions.ApplicationProtocols</c> (http/1.1), or default when the client offered none.</summary>
    public SslApplicationProtocol ApplicationProtocol { get; }

    /// <summary>The certificate the client presented (validated as the endpoint's options say), or null.</summary>
    public X509Certificate2? ClientCertificate { get; }
}
