using System;
using System.Collections.Generic;
using System.Linq;
using System.Text.RegularExpressions;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>The table of rejection reasons: one status, one stable metric name and one message per reason.</summary>
public sealed class RequestRejectionsTests
{
    private static readonly RequestRejectionReason[] s_reasons = Enum.GetValues<RequestRejectionReason>();

    // Every reason that does not answer 400, with the status its RFC gives it.
    private static readonly Dictionary<RequestRejectionReason, int> s_otherStatuses = new()
    {
        [RequestRejectionReason.RequestLineTooLong] = 414,
        [RequestRejectionReason.MethodTooLong] = 501,
        [RequestRejectionReason.UnsupportedVersion] = 505,
        [RequestRejectionReason.TooManyHeaders] = 431,
        [RequestRejectionReason.HeadersTooLarge] = 431,
        [RequestRejectionReason.UnsupportedExpectation] = 417,
        [RequestRejectionReason.ConnectNotSupported] = 501,
        [RequestRejectionReason.UnsupportedTransferCoding] = 501,
        [RequestRejectionReason.BodyTooLarge] = 413,
        [RequestRejectionReason.RequestBodyTooSlow] = 408,
    };

    [Fact]
    public void Every_reason_answers_its_status()
    {
        foreach (RequestRejectionReason reason in s_reasons)
        {
            RequestRejections.GetStatusCode(reason).ShouldBe(s_otherStatuses.GetValueOrDefault(reason, 400), reason.ToString());
        }
    }

    [Fact]
    public void Every_reason_has_its_own_snake_case_name_for_metrics_and_logs()
    {
        string[] names = [.. s_reasons.Select(RequestRejections.GetName)];

        names.ShouldAllBe(name => Regex.IsMatch(name, "^[a-z0-9]+(_[a-z0-9]+)*$"));
        names.Distinct(StringComparer.Ordinal).Count().ShouldBe(names.Length);
    }

    [Fact]
    public void Every_reason_has_its_own_sentence_as_message()
    {
        string[] messages = [.. s_reasons.Select(RequestRejections.GetMessage)];

        messages.ShouldAllBe(message => message.Length > 10 && message.EndsWith('.'));
        messages.Distinct(StringComparer.Ordinal).Count().ShouldBe(messages.Length);
    }

    [Fact]
    public void The_exception_carries_the_reason_with_its_status_and_message()
    {
        var inner = new InvalidOperationException("cause");
        var exception = new BadHttpRequestException(RequestRejectionReason.ForbiddenTrailerField, inner);

        exception.Reason.ShouldBe(RequestRejectionReason.ForbiddenTrailerField);
        exception.StatusCode.ShouldBe(400);
        exception.Message.ShouldBe(RequestRejections.GetMessage(RequestRejectionReason.ForbiddenTrailerField));
        exception.InnerException.ShouldBeSameAs(inner);
    }
}
