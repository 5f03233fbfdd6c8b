using System;
using System.Globalization;
using System.Text;
using Shouldly;

namespace Falconet.Http.Tests.Timekeeping;

/// <summary>The shared Date header value, text and bytes.</summary>
public sealed class DateHeaderValuesTests
{
    [Fact]
    public void Value_is_the_current_time_in_rfc1123_format_and_the_bytes_match()
    {
        DateHeaderValues.Acquire();
        try
        {
            string text = DateHeaderValues.Text;
            text.Length.ShouldBe(29);
            text.ShouldEndWith(" GMT");
            DateTimeOffset parsed = DateTimeOffset.ParseExact(text, "r", CultureInfo.InvariantCulture);
            (DateTimeOffset.UtcNow - parsed).ShouldBeLessThan(TimeSpan.FromSeconds(5));
            Encoding.ASCII.GetString(DateHeaderValues.Bytes).ShouldBe(text);
        }
        finally
        {
            DateHeaderValues.Release();
        }
    }
}
