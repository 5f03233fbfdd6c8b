using System;
using System.Buffers.Binary;
using System.Net;
using System.Text;

namespace Falconet.Transport.Proxy;

/// <summary>
/// What the PROXY protocol header of a connection said (read-only): its version and command, the addresses it carried and
/// its version 2 TLVs. The client's address is also the connection's <c>RemoteEndPoint</c>; this is for the rest.
/// </summary>
/// <remarks>Strings are made on first use; <see cref="Tlvs"/> is the raw block for types this class does not name.</remarks>
public sealed class ProxyProtocolInfo
{
    private readonly byte[] _tlvs;
    private string? _authority;
    private ProxySslInfo? _ssl;

    internal ProxyProtocolInfo(byte version, ProxyCommand command, ProxyAddressFamily family, EndPoint? source, EndPoint? destination, byte[] tlvs)
    {
        Version = version;
        Command = command;
        Family = family;
        SourceEndPoint = source;
        DestinationEndPoint = destination;
        _tlvs = tlvs;
    }

    /// <summary>1 or 2.</summary>
    public int Version { get; }

    /// <summary><see cref="ProxyCommand.Local"/> for the proxy's own connections (health checks), else <see cref="ProxyCommand.Proxy"/>.</summary>
    public ProxyCommand Command { get; }

    /// <summary>The address family the header gave (<see cref="ProxyAddressFamily.Unspecified"/> for UNKNOWN, AF_UNSPEC and LOCAL).</summary>
    public ProxyAddressFamily Family { get; }

    /// <summary>The client's endpoint as the proxy saw it; null when the header gave no IP address.</summary>
    public EndPoint? SourceEndPoint { get; }

    /// <summary>The endpoint the client connected to on the proxy; null when the header gave no IP address.</summary>
    public EndPoint? DestinationEndPoint { get; }

    /// <summary>Every version 2 TLV, as received (empty for version 1 and for none).</summary>
    public ReadOnlyMemory<byte> Tlvs => _tlvs;

    /// <summary>PP2_TYPE_ALPN: the application protocol the client negotiated with the proxy (for example "h2"); empty when absent.</summary>
    public ReadOnlyMemory<byte> ApplicationProtocol => Find(ProxyTlvs.Alpn);

    /// <summary>PP2_TYPE_AUTHORITY: the host name the client asked for (SNI), or null.</summary>
    public string? Authority => _authority ??= Text(ProxyTlvs.Authority);

    /// <summary>PP2_TYPE_UNIQUE_ID: the proxy's identifier of the connection (at most 128 bytes); empty when absent.</summary>
    public ReadOnlyMemory<byte> UniqueId => Find(ProxyTlvs.UniqueId);

    /// <summary>PP2_TYPE_SSL: how the client reached the proxy over TLS; null when the field is absent.</summary>
    public ProxySslInfo? Ssl
    {
        get
        {
            if (_ssl is null && ProxyTlvs.TryFind(_tlvs, ProxyTlvs.Ssl, out int offset, out int length))
            {
                _ssl = new ProxySslInfo(_tlvs.AsMemory(offset, length));
            }

            return _ssl;
        }
    }

    /// <summary>The value of the first TLV of <paramref name="type"/> (custom types 0xE0-0xEF included).</summary>
    public bool TryGetTlv(byte type, out ReadOnlyMemory<byte> value)
    {
        bool found = ProxyTlvs.TryFind(_tlvs, type, out int offset, out int length);
        value = found ? _tlvs.AsMemory(offset, length) : default;
        return found;
    }

    private ReadOnlyMemory<byte> Find(byte type) => TryGetTlv(type, out ReadOnlyMemory<byte> value) ? value : default;

    private string? Text(byte type) => TryGetTlv(type, out ReadOnlyMemory<byte> value) ? Encoding.UTF8.GetString(value.Span) : null;
}

/// <summary>The PP2_TYPE_SSL field: whether the client used TLS to the proxy, whether its certificate was verified, and the sub-fields.</summary>
public sealed class ProxySslInfo
{
    private const byte ClientSsl = 0x01;
    private const byte ClientCertificateConnection = 0x02;
    private const byte ClientCertificateSession = 0x04;

    private readonly ReadOnlyMemory<byte> _value;

    internal ProxySslInfo(ReadOnlyMemory<byte> value)
    {
        _value = value;
        byte client = value.Span[0];
        IsTls = (client & ClientSsl) != 0;
        ClientCertificateOnConnection = (client & ClientCertificateConnection) != 0;
        ClientCertificateInSession = (client & ClientCertificateSession) != 0;
        CertificateVerified = BinaryPrimitives.ReadUInt32BigEndian(value.Span[1..]) == 0;
    }

    /// <summary>PP2_CLIENT_SSL: the client connected to the proxy over TLS.</summary>
    public bool IsTls { get; }

    /// <summary>PP2_CLIENT_CERT_CONN: the client sent a certificate on this connection.</summary>
    public bool ClientCertificateOnConnection { get; }

    /// <summary>PP2_CLIENT_CERT_SESS: the client sent a certificate at least once in its TLS session.</summary>
    public bool ClientCertificateInSession { get; }

    /// <summary>The verify field is 0: the client's certificate (when it sent one) was verified.</summary>
    public bool CertificateVerified { get; }

    /// <summary>PP2_SUBTYPE_SSL_VERSION, such as "TLSv1.3"; null when absent.</summary>
    public string? Version => Text(ProxyTlvs.SslVersion);

    /// <summary>PP2_SUBTYPE_SSL_CN: the common name of the client certificate's subject; null when absent.</summary>
    public string? CommonName => Text(ProxyTlvs.SslCommonName);

    /// <summary>PP2_SUBTYPE_SSL_CIPHER, such as "ECDHE-RSA-AES128-GCM-SHA256"; null when absent.</summary>
    public string? Cipher => Text(ProxyTlvs.SslCipher);

    /// <summary>PP2_SUBTYPE_SSL_SIG_ALG: the algorithm that signed the server certificate; null when absent.</summary>
    public string? SignatureAlgorithm => Text(ProxyTlvs.SslSignatureAlgorithm);

    /// <summary>PP2_SUBTYPE_SSL_KEY_ALG: the algorithm of the server certificate's key; null when absent.</summary>
    public string? KeyAlgorithm => Text(ProxyTlvs.SslKeyAlgorithm);

    private string? Text(byte type) =>
        ProxyTlvs.TryFind(_value.Span[5..], type, out int offset, out int length)
            ? Encoding.UTF8.GetString(_value.Span.Slice(5 + offset, length))
            : null;
}
