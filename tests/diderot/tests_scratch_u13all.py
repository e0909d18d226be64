# every run on the C executor (scratch: the test file keeps few)
import unseen13_inputs
from agreement import round_tests
_, _, test_interp, test_c = round_tests(unseen13_inputs, {})
