using System;
using System.Net.Security;
using System.Security.Authentication;

namespace Falconet.Http.Http2;

/// <summary>
/// RFC 9113 section 9.2: HTTP/2 over TLS needs TLS 1.2 or later, and over TLS 1.2 none of the cipher suites of the block
/// list (Appendix A). Every suite on that list lacks an ephemeral key exchange or an AEAD cipher, so a suite passes when it
/// has both; TLS 1.3 suites all do. Compression is off (OpenSSL's default) and renegotiation is refused by the TLS settings.
/// </summary>
internal static class Http2TlsRequirements
{
    /// <summary>True when a connection that negotiated <paramref name="protocol"/> and <paramref name="cipherSuite"/> may carry HTTP/2.</summary>
    public static bool AreMet(SslProtocols protocol, TlsCipherSuite cipherSuite)
    {
        if (protocol == SslProtocols.Tls13)
        {
            return true;
        }

        if (protocol != SslProtocols.Tls12)
        {
            // Anything older than TLS 1.2.
            return false;
        }

        string name = cipherSuite.ToString();
        bool ephemeral = name.StartsWith("TLS_ECDHE_", StringComparison.Ordinal) || name.StartsWith("TLS_DHE_", StringComparison.Ordinal);
        bool aead = name.Contains("_GCM_", StringComparison.Ordinal) || name.Contains("_CHACHA20_POLY1305", StringComparison.Ordinal)
            || name.Contains("_CCM", StringComparison.Ordinal);
        return ephemeral && aead;
    }
}
