using Microsoft.Win32.SafeHandles;

namespace Falconet.Transport.Tls.OpenSsl;

/// <summary>An OpenSSL <c>SSL_CTX</c>, freed once (a connection's <c>SSL</c> holds its own reference).</summary>
internal sealed class SafeSslContextHandle : SafeHandleZeroOrMinusOneIsInvalid
{
    public SafeSslContextHandle(nint handle)
        : base(ownsHandle: true)
    {
        SetHandle(handle);
    }

    protected override bool ReleaseHandle()
    {
        LibSsl.SSL_CTX_free(handle);
        return true;
    }
}

/// <summary>An OpenSSL <c>SSL</c> of one connection, with its BIO; freed once.</summary>
internal sealed class SafeSslHandle : SafeHandleZeroOrMinusOneIsInvalid
{
    public SafeSslHandle(nint handle)
        : base(ownsHandle: true)
    {
        SetHandle(handle);
    }

    protected override bool ReleaseHandle()
    {
        LibSsl.SSL_free(handle);
        return true;
    }
}
