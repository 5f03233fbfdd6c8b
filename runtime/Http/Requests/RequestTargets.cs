using System;
using System.Text;

namespace Falconet.Http;

/// <summary>Classifies and validates a request-target (RFC 9112 section 3.2) whose bytes are already known to be VCHARs.</summary>
internal static class RequestTargets
{
    /// <summary>Returns the target's form, or throws 400 when the form is not allowed for the method or is malformed.</summary>
    public static RequestTargetForm Classify(KnownMethod method, ReadOnlySpan<byte> target, out int queryIndex)
    {
        queryIndex = -1;
        if (method == KnownMethod.Connect)
        {
            // RFC 9112 section 3.2.3: CONNECT takes only the authority-form, and only it does.
            if (!UriAuthority.IsHostAndPort(target, requirePort: true))
            {
                BadHttpRequestException.Throw(RequestRejectionReason.ConnectWithoutAuthorityForm);
            }

            return RequestTargetForm.Authority;
        }

        if (target.Contains((byte)'#'))
        {
            // RFC 9112 section 3.2: a request-target never carries a fragment.
            BadHttpRequestException.Throw(RequestRejectionReason.TargetWithFragment);
        }

        byte first = target[0];
        if (first == (byte)'/')
        {
            queryIndex = target.IndexOf((byte)'?');
            return RequestTargetForm.Origin;
        }

        if (first == (byte)'*')
        {
            if (target.Length != 1 || method != KnownMethod.Options)
            {
                BadHttpRequestException.Throw(RequestRejectionReason.AsteriskFormWithoutOptions);
            }

            return RequestTargetForm.Asterisk;
        }

        if (IsAbsoluteHttpUri(target))
        {
            queryIndex = target.IndexOf((byte)'?');
            return RequestTargetForm.Absolute;
        }

        BadHttpRequestException.Throw(RequestRejectionReason.InvalidTarget);
        return default;
    }

    /// <summary>True for "HTTP/" DIGIT "." DIGIT: a version that is well formed but perhaps not supported.</summary>
    public static bool IsHttpVersionSyntax(ReadOnlySpan<byte> version) =>
        version.Length == 8
        && version.StartsWith("HTTP/"u8)
        && char.IsAsciiDigit((char)version[5])
        && version[6] == (byte)'.'
        && char.IsAsciiDigit((char)version[7]);

    /// <summary>"http://" or "https://" (scheme case-insensitive), a non-empty authority without userinfo, then an optional path and query.</summary>
    private static bool IsAbsoluteHttpUri(ReadOnlySpan<byte> target)
    {
        int schemeLength;
        if (target.Length > 7 && Ascii.EqualsIgnoreCase(target[..7], "http://"u8))
        {
            schemeLength = 7;
        }
        else if (target.Length > 8 && Ascii.EqualsIgnoreCase(target[..8], "https://"u8))
        {
            schemeLength = 8;
        }
        else
        {
            return false;
        }

        ReadOnlySpan<byte> afterScheme = target[schemeLength..];
        int authorityEnd = afterScheme.IndexOfAny((byte)'/', (byte)'?');
        ReadOnlySpan<byte> authority = authorityEnd < 0 ? afterScheme : afterScheme[..authorityEnd];
        return UriAuthority.IsHostAndPort(authority, requirePort: false);
    }
}
