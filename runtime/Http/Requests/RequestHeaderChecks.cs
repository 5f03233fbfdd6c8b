using System;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>The checks a request's header section must pass as a whole, run once it is complete: Host and Expect.</summary>
internal static class RequestHeaderChecks
{
    /// <summary>Throws when the request lacks a required field or holds one the server must refuse.</summary>
    /// <exception cref="BadHttpRequestException">400 for an HTTP/1.1 request without Host, more than one Host, or an invalid
    /// Host value, or an empty one on HTTP/1.1 with an origin-form or asterisk-form target; 417 for an expectation other than 100-continue.</exception>
    /// <param name="headers">The complete header section.</param>
    /// <param name="version">The request's version.</param>
    /// <param name="form">The form of the request target: an empty Host is refused where it would name the target's host.</param>
    /// <param name="validatedHost">
    /// The Host string a previous request of the connection passed with. The header collection hands back the same
    /// instance for an equal value, so that one is not scanned again; a newly valid one is stored here.
    /// </param>
    public static void Check(RequestHeaders headers, KnownVersion version, RequestTargetForm form, ref string? validatedHost)
    {
        CheckHost(headers.Host, version, form, ref validatedHost);

        StringValues expect = headers.Expect;
        if (expect.Count != 0 && !ExpectsOnlyContinue(expect))
        {
            // RFC 9110 section 10.1.1: 100-continue is the only expectation defined; the server cannot meet another.
            BadHttpRequestException.Throw(RequestRejectionReason.UnsupportedExpectation);
        }
    }

    /// <summary>
    /// RFC 9112 section 3.2: a server MUST answer 400 to an HTTP/1.1 request without Host, to any request with more
    /// than one Host line, and to an invalid Host value. The check holds for absolute-form targets too, although
    /// their authority then names the host (section 3.2.2).
    /// </summary>
    private static void CheckHost(StringValues host, KnownVersion version, RequestTargetForm form, ref string? validatedHost)
    {
        switch (host.Count)
        {
            case 0:
                if (version != KnownVersion.Http10)
                {
                    BadHttpRequestException.Throw(RequestRejectionReason.MissingHost);
                }

                break;
            case 1:
                string value = host[0]!;
                if (value.Length == 0 && version != KnownVersion.Http10 && form is RequestTargetForm.Origin or RequestTargetForm.Asterisk)
                {
                    // RFC 9112 section 3.2: an empty Host is what a client sends when the target URI has no authority. An
                    // origin-form or asterisk-form target takes its authority from Host, and an http URI with an empty
                    // host is invalid (RFC 9110 section 4.2.1). HTTP/1.0 predates Host, so its empty one is left alone.
                    BadHttpRequestException.Throw(RequestRejectionReason.EmptyHost);
                }

                if (!ReferenceEquals(value, validatedHost))
                {
                    if (!UriAuthority.IsValidHostHeader(value))
                    {
                        BadHttpRequestException.Throw(RequestRejectionReason.InvalidHost);
                    }

                    validatedHost = value;
                }

                break;
            default:
                BadHttpRequestException.Throw(RequestRejectionReason.MultipleHost);
                break;
        }
    }

    /// <summary>True when every member of every Expect line is "100-continue" (case-insensitive); empty members are skipped.</summary>
    internal static bool ExpectsOnlyContinue(StringValues expect)
    {
        for (int i = 0; i < expect.Count; i++)
        {
            ReadOnlySpan<char> rest = expect[i];
            while (!rest.IsEmpty)
            {
                int comma = rest.IndexOf(',');
                ReadOnlySpan<char> member = (comma < 0 ? rest : rest[..comma]).Trim(" \t");
                if (!member.IsEmpty && !member.Equals("100-continue", StringComparison.OrdinalIgnoreCase))
                {
                    return false;
                }

                rest = comma < 0 ? ReadOnlySpan<char>.Empty : rest[(comma + 1)..];
            }
        }

        return true;
    }
}
